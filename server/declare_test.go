package server_test

import (
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/mcptest"
	"github.com/mcpkit/mcpkit/server"
)

func TestDeclareWithNothingRegistered(t *testing.T) {
	s := server.New(&server.Options{Declare: mcp.ServerCapabilities{Tools: &mcp.ToolsCapability{}, Resources: &mcp.ResourcesCapability{}}})
	c := s.Capabilities()
	if c.Tools == nil || !c.Tools.ListChanged || c.Resources == nil || !c.Resources.Subscribe || c.Prompts != nil {
		t.Fatalf("capabilities = %+v", c)
	}
	for _, era := range mcptest.Eras() {
		p := mcptest.NewPair(t, s, &mcptest.Options{Era: era})
		res, err := p.Client.ListTools(p.Context(), nil)
		if err != nil || len(res.Tools) != 0 {
			t.Fatalf("%s: tools/list = %+v, %v", era, res, err)
		}
		if _, err := p.Client.ListPrompts(p.Context(), nil); err == nil {
			t.Fatalf("%s: prompts/list of a server without prompts answered", era)
		}
	}
}
