package streamable

import (
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestAnswerDelivery: our answer to a server request that the server
// refuses with 503 (behind a load balancer: the instance that asked is
// unreachable from the one that got the POST) is sent again, up to
// answerRetries more times; when it cannot be delivered, the request on
// whose stream the server asked fails with the reason instead of waiting
// for ever. The pauses before each new attempt double from 100 ms; they
// are on a manual clock that records them and ends them at once.
func TestAnswerDelivery(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		refusals int32 // 503s before the answer is accepted
		attempts int32
		pauses   []time.Duration
		fails    bool
	}{
		{"accepted after two refusals", 2, 3, []time.Duration{100 * ms, 200 * ms}, false},
		{"never accepted", 100, 1 + answerRetries, []time.Duration{100 * ms, 200 * ms, 400 * ms}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var answers atomic.Int32
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
				switch {
				case r.Method != http.MethodPost:
					w.WriteHeader(http.StatusMethodNotAllowed)
				case in.Msg.IsRequest():
					sseStart(w)
					sseEvent(w, "", 0, `{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`)
					hold(r)
				case in.Msg.IsResponse():
					if answers.Add(1) <= tc.refusals {
						writeJSON(w, http.StatusServiceUnavailable, rpcError(mcp.ID{}, -32603, "the instance that sent this request cannot be reached"))
						return
					}
					w.WriteHeader(http.StatusAccepted)
				}
			})
			clock := newWaitClock(true)
			c := newConn(t, f, nil)
			c.waitAfter = clock.After
			ctx := testCtx(t)
			if err := c.Write(ctx, transport.Message{Data: []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`)}); err != nil {
				t.Fatal(err)
			}
			if m := readMsg(t, c); !m.IsRequest() || m.Method != "roots/list" {
				t.Fatalf("read %+v, want the server's roots/list", m)
			}
			err := c.Write(ctx, transport.Message{Data: []byte(`{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`)})
			if got := answers.Load(); got != tc.attempts {
				t.Errorf("%d POSTs of the answer, want %d", got, tc.attempts)
			}
			if got := clock.Delays(); !slices.Equal(got, tc.pauses) {
				t.Errorf("paused %v before the attempts, want %v", got, tc.pauses)
			}
			if !tc.fails {
				if err != nil {
					t.Fatalf("Write = %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Write succeeded though every attempt was refused")
			}
			m := readMsg(t, c)
			if id, _ := m.ID.Int(); !m.IsResponse() || id != 7 || m.Error == nil || !strings.Contains(m.Error.Message, "could not be delivered") {
				t.Fatalf("read %+v, want request 7 failed because the answer could not be delivered", m)
			}
		})
	}
}
