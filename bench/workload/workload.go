// Package workload defines the benchmark's requests (W1–W4), a minimal
// keep-alive HTTP/1.1 connection that sends pre-built requests, and the
// check applied to every answer.
package workload

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
)

// Text is what every echo call sends and expects back.
const Text = "hello-bench-7f3a"

// Protocol versions.
const (
	Modern = "2026-07-28"
	Legacy = "2025-11-25"
)

// Endpoint paths (the same as package servers').
const (
	PathStateless = "/mcp"
	PathSession   = "/mcp-session"
)

const envelope = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}},`

// Bodies.
var (
	// ModernCall is a 2026-07-28 tools/call: the envelope in _meta.
	ModernCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + envelope + `"name":"echo","arguments":{"text":"` + Text + `"}}}`)
	// LegacyCall is a 2025-11-25 tools/call.
	LegacyCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + Text + `"}}}`)
	// Initialize opens a 2025-11-25 session.
	Initialize = []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}`)
	// Initialized is the notification that follows initialize.
	Initialized = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
)

// Header sets.
var (
	ModernHeaders = [][2]string{{"MCP-Protocol-Version", Modern}, {"Mcp-Method", "tools/call"}, {"Mcp-Name", "echo"}}
	LegacyHeaders = [][2]string{{"MCP-Protocol-Version", Legacy}}
)

// Workload names the request a worker repeats.
type Workload struct {
	Name, Desc string
	Path       string
	Headers    [][2]string
	Body       []byte
	// Session: open a legacy session per connection first, and send its
	// id with every call.
	Session bool
	// Churn: every iteration opens a session, calls once and deletes it
	// (initialize, notifications/initialized, tools/call, DELETE).
	Churn bool
}

// All lists the workloads by name.
var All = map[string]Workload{
	"W1": {Name: "W1", Desc: "modern tools/call (2026-07-28, JSON)", Path: PathStateless, Headers: ModernHeaders, Body: ModernCall},
	"W2": {Name: "W2", Desc: "session-less legacy tools/call (2025-11-25)", Path: PathStateless, Headers: LegacyHeaders, Body: LegacyCall},
	"W3": {Name: "W3", Desc: "sessionful legacy tools/call (initialize per connection)", Path: PathSession, Headers: LegacyHeaders, Body: LegacyCall, Session: true},
	"W4": {Name: "W4", Desc: "session churn: initialize, initialized, tools/call, DELETE (latency per cycle)", Path: PathSession, Headers: LegacyHeaders, Body: LegacyCall, Churn: true},
}

// Supported reports whether a server takes part in a workload: the raw
// ceiling has no sessions.
func Supported(server, workload string) bool {
	return server != "raw" || (workload != "W3" && workload != "W4")
}

// BuildRequest returns the bytes of one HTTP/1.1 POST.
func BuildRequest(host, path string, headers [][2]string, body []byte) []byte {
	return buildRequest("POST", host, path, headers, body)
}

// BuildDelete returns the bytes of the DELETE that ends session sid.
func BuildDelete(host, path, sid string) []byte {
	return buildRequest("DELETE", host, path, append([][2]string{{"Mcp-Session-Id", sid}}, LegacyHeaders...), nil)
}

func buildRequest(method, host, path string, headers [][2]string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", method, path, host)
	for _, h := range headers {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	return b.Bytes()
}

// HTTPRequest returns w's request as an *http.Request for handler
// benchmarks and tests (sid, if set, is the session id).
func (w Workload) HTTPRequest(url, sid string) *http.Request {
	r, err := http.NewRequest(http.MethodPost, url+w.Path, bytes.NewReader(w.Body))
	if err != nil {
		panic(err)
	}
	SetHeaders(r.Header, w.Headers)
	if sid != "" {
		r.Header.Set("Mcp-Session-Id", sid)
	}
	return r
}

// SetHeaders sets the common headers and hs on h.
func SetHeaders(h http.Header, hs [][2]string) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	for _, kv := range hs {
		h.Set(kv[0], kv[1])
	}
}

var (
	wantText = []byte(Text)
	isError  = []byte(`"isError":true`)
	rpcError = []byte(`"error":{`)
)

// Check is the cheap test applied to every answer under load: status 200,
// a result carrying the echoed text, no error. An SSE answer is accepted
// if its data carries the same.
func Check(status int, body []byte) error {
	if status != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", status, body)
	}
	if !bytes.Contains(body, wantText) || bytes.Contains(body, isError) || bytes.Contains(body, rpcError) || !bytes.Contains(body, []byte(`"result"`)) {
		return fmt.Errorf("unexpected answer: %.300s", body)
	}
	return nil
}

// Trim shortens s for messages.
func Trim(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
