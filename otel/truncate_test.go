package mcpotel

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// rawSession is a legacy session with a server whose client writes the
// wire itself, so that it can choose ids and names no client API would.
type rawSession struct {
	t    *testing.T
	conn transport.Conn
}

func newRawSession(t *testing.T, s *server.Server) *rawSession {
	t.Helper()
	a, b := memory.NewPair()
	ss := s.Connect(b)
	t.Cleanup(func() { a.Close(); ss.Wait() })
	r := &rawSession{t, a}
	r.call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + mcp.LatestLegacy + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

func (r *rawSession) send(msg string) {
	r.t.Helper()
	if err := r.conn.Write(context.Background(), transport.Message{Data: []byte(msg)}); err != nil {
		r.t.Fatal(err)
	}
}

// call sends a request and reads until its answer (the only request in
// flight, so the next response is its).
func (r *rawSession) call(msg string) string {
	r.t.Helper()
	r.send(msg)
	for range 100 {
		b, err := r.conn.Read(context.Background())
		if err != nil {
			r.t.Fatal(err)
		}
		if s := string(b); strings.Contains(s, `"result"`) || strings.Contains(s, `"error"`) {
			return s
		}
	}
	r.t.Fatal("no answer in 100 messages")
	return ""
}

// TestPeerValuesTruncated: a client's megabyte tool name, prompt name,
// resource URI, method and request id reach the server's spans cut to
// DefaultMaxNameLength bytes on a UTF-8 boundary, ending with "…", and
// the histograms get neither the unknown names nor the unknown method.
func TestPeerValuesTruncated(t *testing.T) {
	const maxName = 256 + len("…") // DefaultMaxNameLength and the mark
	tl := newTelemetry(t, TransportPipe)
	s := server.New(&server.Options{Interceptors: []intercept.Interceptor{tl.Interceptor()}})
	r := newRawSession(t, s)

	// "é" is 2 bytes: with a 1-byte start, one straddles byte 256.
	huge := "x" + strings.Repeat("é", 1<<19)
	hugeID := `"` + strings.Repeat("i", 1<<20) + `"`
	r.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + huge + `","arguments":{}}}`)
	r.call(`{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"` + huge + `"}}`)
	r.call(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"file:///` + huge + `"}}`)
	r.call(`{"jsonrpc":"2.0","id":` + hugeID + `,"method":"x/` + huge + `","params":{}}`)

	spans := tl.spans.GetSpans()
	var seen int
	for _, sp := range spans {
		if sp.SpanKind != trace.SpanKindServer || sp.Name == "initialize" {
			continue
		}
		seen++
		if !utf8.ValidString(sp.Name) || len(sp.Name) > 2*maxName+1 || !strings.HasSuffix(sp.Name, "…") {
			t.Errorf("span name of %d bytes (valid UTF-8 %v), ends %q", len(sp.Name), utf8.ValidString(sp.Name), tail(sp.Name))
		}
		for _, a := range sp.Attributes {
			v := a.Value.String()
			if len(v) > maxName || !utf8.ValidString(v) {
				t.Errorf("span %.20q: attribute %s of %d bytes (valid UTF-8 %v)", sp.Name, a.Key, len(v), utf8.ValidString(v))
			}
		}
		if len(sp.Status.Description) > 1024+len("…") {
			t.Errorf("span %.20q: status description of %d bytes", sp.Name, len(sp.Status.Description))
		}
	}
	if seen != 4 {
		t.Fatalf("%d server spans besides initialize, want 4", seen)
	}
	tools := tl.find("tools/call x"+strings.Repeat("é", 127)+"…", trace.SpanKindServer)
	if len(tools) != 1 || attr(tools[0], "gen_ai.tool.name") != "x"+strings.Repeat("é", 127)+"…" {
		t.Errorf("tools/call span not cut at the character before byte 256: %d spans", len(tools))
	}
	if n := tl.histogramCount(t, "mcp.server.operation.duration", "mcp.method.name", "_OTHER"); n != 1 {
		t.Errorf("the unknown method's durations under _OTHER: %d, want 1", n)
	}
	// The unknown tool's and prompt's names, whatever their (cut) value:
	// a failed request keeps no name in the histograms.
	for _, key := range []attribute.Key{"gen_ai.tool.name", "gen_ai.prompt.name"} {
		for _, v := range []string{huge, "x" + strings.Repeat("é", 127) + "…"} {
			if n := tl.histogramCount(t, "mcp.server.operation.duration", key, v); n != 0 {
				t.Errorf("an unknown %s reached the histograms as %.20q", key, v)
			}
		}
	}
	for _, m := range []string{"tools/call", "prompts/get", "resources/read"} {
		if n := tl.histogramCount(t, "mcp.server.operation.duration", "mcp.method.name", m); n != 1 {
			t.Errorf("%s durations: %d, want 1", m, n)
		}
	}
}

func tail(s string) string {
	if len(s) > 8 {
		return s[len(s)-8:]
	}
	return s
}

// TestClientSpanTruncated: on a client, what the server answers (a
// megabyte error message) and the names it is called with are cut the
// same way.
func TestClientSpanTruncated(t *testing.T) {
	cliTel := newTelemetry(t, TransportPipe)
	s := server.New(nil)
	huge := strings.Repeat("€", 1<<18)
	s.AddRawTool(&mcp.Tool{Name: "fail"}, func(context.Context, *server.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, jsonrpc.NewError(mcp.CodeInternalError, huge)
	})
	a, b := memory.NewPair()
	ss := s.Connect(b)
	defer ss.Wait()
	c, err := client.Connect(context.Background(), a, &client.Options{Interceptors: []intercept.Interceptor{cliTel.Interceptor()}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "fail"}); err == nil {
		t.Fatal("the call succeeded")
	}
	if _, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "fail" + huge}); err == nil {
		t.Fatal("the call of an unknown tool succeeded")
	}
	var n int
	for _, sp := range cliTel.spans.GetSpans() {
		if sp.SpanKind != trace.SpanKindClient || !strings.HasPrefix(sp.Name, "tools/call") {
			continue
		}
		n++
		if d := sp.Status.Description; len(d) > 1024+len("…") || !utf8.ValidString(d) {
			t.Errorf("client span %.20q: status description of %d bytes (valid UTF-8 %v)", sp.Name, len(d), utf8.ValidString(d))
		}
		if len(sp.Name) > len("tools/call ")+256+len("…") || !utf8.ValidString(sp.Name) {
			t.Errorf("client span name of %d bytes", len(sp.Name))
		}
	}
	if n != 2 {
		t.Errorf("%d client tools/call spans, want 2", n)
	}
}
