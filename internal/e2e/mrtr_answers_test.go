package e2e

// Unchecked answers, end to end: one handler asks for a form; a client
// whose elicitation handler answers outside the requestedSchema gets
// -32602 naming the field in both eras — on 2026-07-28 the server checks
// the retry's inputResponses against the form recorded in the sealed
// requestState, on a legacy session the shim checks the client's
// elicitation/create result — and the handler never sees the content.

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

func TestMRTRContentCheckedBothEras(t *testing.T) {
	var runs, answered atomic.Int32
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "forms", Version: "1.0.0"}})
	server.AddTool(s, &mcp.Tool{Name: "age"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		runs.Add(1)
		ans, ok, err := req.ElicitResult("age")
		if err != nil {
			return "", err
		}
		if !ok {
			return "", server.NeedInput().Elicit("age", &mcp.ElicitParams{Message: "How old are you?",
				RequestedSchema: jsontext.Value(`{"type":"object","properties":{"age":{"type":"integer","minimum":0}},"required":["age"]}`)})
		}
		answered.Add(1)
		return ans.Action, nil
	})
	url := serveHTTP(t, s)
	for _, tc := range []struct {
		era     string
		version string
		where   string
	}{
		{"modern", "", `inputResponses["age"].content.age`},
		{"legacy", mcp.LatestLegacy, "the client's elicitation/create result: content.age"},
	} {
		t.Run(tc.era, func(t *testing.T) {
			runs.Store(0)
			c, err := client.Connect(testCtx(t), streamable.New(url, nil), &client.Options{ProtocolVersion: tc.version,
				ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"age": -1}}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.CallTool(testCtx(t), &mcp.CallToolParams{Name: "age"})
			e, ok := jsonrpc.AsError(err)
			if !ok || e.Code != mcp.CodeInvalidParams || !strings.Contains(e.Message, tc.where+": must be >= 0") {
				t.Fatalf("tools/call age: %v; want -32602 naming %s", err, tc.where)
			}
			if n := runs.Load(); n != 1 {
				t.Errorf("the handler ran %d times, want 1 (never with the answer)", n)
			}
		})
	}
	if n := answered.Load(); n != 0 {
		t.Errorf("the handler read %d answers", n)
	}
}
