package streamhttp

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestHTTPRouteWithoutHandlerContext: what a handler sends through its
// Request goes on the stream of its own POST whatever context it passes
// — the request id travels with the message (transport.Message.Related),
// not in the context.
func TestHTTPRouteWithoutHandlerContext(t *testing.T) {
	s := echoServer()
	server.AddTool(s, &mcp.Tool{Name: "detached"}, func(_ context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
		ctx := context.Background() // carries nothing of the request
		if err := req.Progress(ctx, 1, 2, "half"); err != nil {
			return "", err
		}
		if err := req.Log(ctx, mcp.LevelInfo, "detached", "logged"); err != nil {
			return "", err
		}
		return "done", nil
	})
	e := newHTTPEnv(t, s, nil)
	sid := e.Initialize("{}")
	id := e.ID()
	_, msgs := readToolStream(e, e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "detached", `{}`, "tok"))), id)
	var kinds []string
	for _, m := range msgs {
		kinds = append(kinds, m.Method)
	}
	want := []string{mcp.NotificationProgress, mcp.NotificationMessage, ""}
	if strings.Join(kinds, "|") != strings.Join(want, "|") {
		t.Errorf("the POST stream carried %q, want %q", kinds, want)
	}
}
