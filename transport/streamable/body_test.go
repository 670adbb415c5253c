package streamable

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestJSONAnswerBodies: a JSON answer is read whether its length is
// declared or not, and whatever parameters its Content-Type carries; a
// body over MaxEventBytes fails the request either way; after a JSON
// answer read to its end, the connection is reused.
func TestJSONAnswerBodies(t *testing.T) {
	const limit = 1024
	fits := `{"x":"` + strings.Repeat("a", limit-100) + `"}`
	big := `{"x":"` + strings.Repeat("b", 2*limit) + `"}`
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		body := result(in.Msg.ID, fits)
		if strings.HasPrefix(in.Msg.Method, "big") {
			body = result(in.Msg.ID, big)
		}
		switch in.Msg.Method {
		case "sized", "big-sized":
			writeJSON(w, http.StatusOK, body) // net/http declares the length
		case "chunked", "big-chunked":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, body[:10])
			w.(http.Flusher).Flush() // no Content-Length: chunked
			_, _ = io.WriteString(w, body[10:])
		case "charset":
			w.Header().Set("Content-Type", "Application/JSON; charset=utf-8")
			_, _ = io.WriteString(w, body)
		}
	})
	var dials atomic.Int32
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	hc := &http.Client{Transport: tr}
	c := newConn(t, f, &Options{MaxEventBytes: limit, HTTPClient: hc})
	for i, method := range []string{"sized", "chunked", "charset", "sized"} {
		id := mcp.IntID(int64(i + 1))
		mustWrite(t, c, request(id, method, ""))
		if m := readMsg(t, c); m.ID != id || m.Error != nil || string(m.Result) != fits {
			t.Errorf("%s: %v", method, m)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d connections for four JSON answers in a row, want 1 (each body read to its end)", n)
	}
	for i, method := range []string{"big-sized", "big-chunked"} {
		err := c.Write(testCtx(t), transport.Message{Data: []byte(request(mcp.IntID(int64(10+i)), method, ""))})
		if !errors.Is(err, ErrEventTooLarge) {
			t.Errorf("%s: Write = %v, want ErrEventTooLarge", method, err)
		}
	}
}
