package redisstore

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// TestLegacyTaskStatusRidesTheCast: a legacy task's settled status
// reaches its session's GET stream, whichever instance holds the stream,
// from the peers' broadcast of the settle (the cas script publishes it),
// with no PUBLISH of its own: the owner forwards nothing to the holder.
func TestLegacyTaskStatusRidesTheCast(t *testing.T) {
	redistest.Need(t)
	for _, tc := range []struct {
		name   string
		stream int // the instance that holds the session's GET stream; the task runs on 0
	}{{"stream-elsewhere", 1}, {"stream-on-owner", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			p := prefix(t)
			var c tripCounter
			cl := countingClient(t, &c)
			in := newRTInstances(t, cl, p, 3)
			a := in.urls[0]
			sid := rtSession(t, a)
			resp := rtOpen(t, http.MethodGet, in.urls[tc.stream], sid, "")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET stream: %s", resp.Status)
			}
			t.Cleanup(func() { resp.Body.Close() })
			// A status that never comes fails the test within failAfter:
			// closing the body ends the read below.
			bound := time.AfterFunc(failAfter, func() { resp.Body.Close() })
			defer bound.Stop()
			stream := bufio.NewReader(resp.Body)
			out, body := rtDo(t, http.MethodPost, a, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait","task":{"ttl":60000}}}`)
			m := taskIDRE.FindStringSubmatch(body)
			if out.StatusCode != http.StatusOK || m == nil {
				t.Fatalf("no task: %s %s", out.Status, body)
			}
			c.reset()
			close(in.release)
			// The completed status (a working one may come first).
			want := fmt.Sprintf(`"taskId":%q`, m[1])
			for {
				line, err := stream.ReadString('\n')
				if err != nil {
					t.Fatalf("the GET stream ended (or %v passed) before the completed status: %v", failAfter, err)
				}
				if strings.Contains(line, "notifications/tasks/status") && strings.Contains(line, want) && strings.Contains(line, `"completed"`) {
					break
				}
			}
			_, cmds := c.take()
			// Exactly once: a list change made on the owner after the settle
			// reaches the stream after anything the settle sent; no second
			// completed status comes before it.
			if err := server.AddTool(in.servers[0], &mcp.Tool{Name: "late"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) {
				return "", nil
			}); err != nil {
				t.Fatal(err)
			}
			for {
				line, err := stream.ReadString('\n')
				if err != nil {
					t.Fatalf("the GET stream ended (or %v passed) before the list change: %v", failAfter, err)
				}
				if strings.Contains(line, "notifications/tasks/status") && strings.Contains(line, want) && strings.Contains(line, `"completed"`) {
					t.Fatalf("the completed status came twice: %s", line)
				}
				if strings.Contains(line, "notifications/tools/list_changed") {
					break
				}
			}
			if n := countCmd(cmds, "PUBLISH"); n != 0 || !slices.Contains(cmds, "EVALSHA(cas)") {
				t.Fatalf("settling: %q; want the cas script (with its broadcast) and no PUBLISH (%d)", cmds, n)
			}
		})
	}
}

func countCmd(cmds []string, name string) int {
	n := 0
	for _, c := range cmds {
		if c == name {
			n++
		}
	}
	return n
}
