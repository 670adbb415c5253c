package e2e

import (
	"context"
	"log/slog"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// TestLogHandler: records logged with log/slog through
// server.NewLogHandler reach the client as notifications/message at the
// level the client set, in both eras (legacy: logging/setLevel; modern:
// the envelope's logLevel).
func TestLogHandler(t *testing.T) {
	for _, tc := range icCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := server.New(&server.Options{Logging: true})
			server.AddTool(s, &mcp.Tool{Name: "work"}, func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
				log := slog.New(server.NewLogHandler(req.Request, "worker")).With("job", 7)
				log.DebugContext(ctx, "too fine")
				log.InfoContext(ctx, "below warning")
				log.WithGroup("db").WarnContext(ctx, "slow", "ms", 250)
				log.ErrorContext(ctx, "failed", "err", "boom")
				return "done", nil
			})
			logs := make(chan *mcp.LoggingMessageParams, 16)
			c := icConnect(t, tc, s, &client.Options{OnLog: func(ctx context.Context, p *mcp.LoggingMessageParams) { logs <- p }})
			ctx := testCtx(t)
			if err := c.SetLoggingLevel(ctx, mcp.LevelWarning); err != nil {
				t.Fatal(err)
			}
			icWant(t, c, "work", nil, "done")
			first := recv(t, logs, "the warning")
			second := recv(t, logs, "the error")
			if first.Level != mcp.LevelWarning || first.Logger != "worker" || second.Level != mcp.LevelError {
				t.Fatalf("got %+v then %+v", first, second)
			}
			var data map[string]any
			raw, _ := json.Marshal(first.Data)
			if err := json.Unmarshal(raw, &data); err != nil {
				t.Fatal(err)
			}
			db, _ := data["db"].(map[string]any)
			if data["msg"] != "slow" || data["job"] != float64(7) || db["ms"] != float64(250) {
				t.Errorf("data = %s", raw)
			}
			select {
			case extra := <-logs:
				t.Errorf("unexpected log %+v", extra)
			default:
			}
		})
	}
}
