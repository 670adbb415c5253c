//go:build !race

// The race detector's instrumentation allocates on its own, so the
// allocation ceilings are checked without -race: scripts/test runs them
// in a pass of their own ("allocation ceilings").

package streamhttp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// Allocation ceilings of the server's hot paths (bench/README.md: W1,
// W2 and W3): one tools/call of an echo tool served by the Handler, with
// the request reused and the answer written to a reusable recorder, as
// bench's BenchmarkHandler does, so that what is counted is the Handler's
// own work (reading and decoding the body, the checks, the session
// lookup, dispatch, the typed tool, encoding). The recorder takes read
// deadlines as net/http's writer does, so the body is read as a
// server's is (not by internal/httpbody's timer, kept for writers
// without deadlines). No net/http client is involved, so the counts are
// exact: lower a ceiling when the server gets cheaper; a change that
// raises one must say why.
const (
	modernCallCeiling    = 23 // W1: a 2026-07-28 tools/call, session-less
	statelessCallCeiling = 21 // W2: a 2025-11-25 tools/call, session-less
	sessionCallCeiling   = 26 // W3: a 2025-11-25 tools/call on a session
)

const allocEnvelope = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}},`

var (
	allocModernCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + allocEnvelope + `"name":"echo","arguments":{"text":"hello-bench-7f3a"}}}`)
	allocLegacyCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello-bench-7f3a"}}}`)
)

type echoText struct {
	Text string `json:"text"`
}

func allocEchoServer() *server.Server {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "allocs", Version: "1.0.0"}})
	server.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"},
		func(ctx context.Context, req *server.CallToolRequest, in echoText) (echoText, error) { return in, nil })
	return s
}

// allocRecorder is a reusable http.ResponseWriter.
type allocRecorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (r *allocRecorder) Header() http.Header { return r.h }
func (r *allocRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *allocRecorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}
func (r *allocRecorder) Flush() {}

// SetReadDeadline is there as on net/http's own writer, so that the
// body's read bound takes the path a server's requests take (a deadline,
// not the timer kept for writers without one).
func (r *allocRecorder) SetReadDeadline(time.Time) error { return nil }

// TestHandlerNoAllocsCeiling holds W1, W2 and W3 to their ceilings.
func TestHandlerNoAllocsCeiling(t *testing.T) {
	stateless := NewHandler(allocEchoServer(), &Options{Stateless: true})
	sessions := NewHandler(allocEchoServer(), nil)
	t.Cleanup(func() { stateless.Close(); sessions.Close() })
	rec := &allocRecorder{h: http.Header{}}
	rd := bytes.NewReader(nil)
	serve := func(h http.Handler, req *http.Request, body []byte) {
		rd.Reset(body)
		req.Body = io.NopCloser(rd)
		req.ContentLength = int64(len(body))
		clear(rec.h)
		rec.status = 0
		rec.body.Reset()
		h.ServeHTTP(rec, req)
	}
	newReq := func(version string, hs ...string) *http.Request {
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", version)
		for i := 0; i+1 < len(hs); i += 2 {
			req.Header.Set(hs[i], hs[i+1])
		}
		return req
	}
	// W3's session: initialize, then notifications/initialized.
	sreq := newReq(mcp.Version20251125)
	serve(sessions, sreq, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}`))
	sid := rec.h.Get("Mcp-Session-Id")
	if rec.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", rec.status, rec.body.Bytes())
	}
	sreq.Header.Set("Mcp-Session-Id", sid)
	serve(sessions, sreq, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if rec.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", rec.status, rec.body.Bytes())
	}
	for _, tc := range []struct {
		name    string
		h       http.Handler
		req     *http.Request
		body    []byte
		ceiling int
	}{
		{"W1 modern", stateless, newReq(mcp.Version20260728, "Mcp-Method", "tools/call", "Mcp-Name", "echo"), allocModernCall, modernCallCeiling},
		{"W2 legacy session-less", stateless, newReq(mcp.Version20251125), allocLegacyCall, statelessCallCeiling},
		{"W3 legacy on a session", sessions, sreq, allocLegacyCall, sessionCallCeiling},
	} {
		call := func() {
			serve(tc.h, tc.req, tc.body)
			if rec.status != http.StatusOK || !bytes.Contains(rec.body.Bytes(), []byte(`"structuredContent":{"text":"hello-bench-7f3a"}`)) {
				t.Fatalf("%s: %d %s", tc.name, rec.status, rec.body.Bytes())
			}
		}
		call()
		n := int(testing.AllocsPerRun(500, call))
		t.Logf("%s: %d allocations a request (ceiling %d)", tc.name, n, tc.ceiling)
		if n > tc.ceiling {
			t.Errorf("%s: %d allocations a request, ceiling %d", tc.name, n, tc.ceiling)
		}
	}
}
