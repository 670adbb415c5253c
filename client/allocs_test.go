//go:build !race

// The race detector's instrumentation allocates on its own, so the
// allocation ceilings are checked without -race: scripts/test runs them
// in a pass of their own ("allocation ceilings").

package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Allocation ceilings of one tools/call through the client over
// Streamable HTTP (bench/README.md: W1c and W3c), counted with the
// in-memory server and round tripper below, whose own allocations are
// part of the count. The client's share is what the raw loop (the same
// exchange written with net/http and encoding/json alone, the leanest
// honest way: rawCall) does not allocate: the over-raw ceilings bound
// it, a modern call no costlier than a legacy one. With a context that
// cannot end, the modern call allocates 4 less than its raw loop (the
// transport shares the header values of its everyday methods and of the
// names it calls, Mcp-Method and Mcp-Name, which the raw loop makes per
// call) and the legacy one 1 less (the transport keeps the
// request's bytes jsonrpc hands over, transport.Message.Owned, instead
// of a copy); a context that can end
// costs watchAllocs more. Lower them when the client gets cheaper; a
// change that raises them must say why. The absolute ceilings keep 4
// allocations of headroom over the measured 60 and 55, because net/http's
// own count may move with a Go release; the over-raw ceilings, which
// net/http cancels out of, have none.
const (
	modernCallCeiling    = 64 // W1c: a 2026-07-28 call (60 measured)
	legacyCallCeiling    = 59 // W3c: a 2025-11-25 call on a session (55 measured)
	modernOverRawCeiling = -4
	legacyOverRawCeiling = -1
	// watchAllocs: what a context that can end adds (the transport's
	// context.AfterFunc watch of it, and its stop).
	watchAllocs = 3
)

// TestClientCallNoAllocsCeiling holds W1c and W3c to their ceilings,
// each made with a context that cannot end (context.Background) and with
// one that can (the transport then watches it: context.AfterFunc).
func TestClientCallNoAllocsCeiling(t *testing.T) {
	hc := &http.Client{Transport: memTrip{allocServer()}}
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	args := jsontext.Value(`{"text":"hi"}`)
	for _, tc := range []struct {
		name, path, version string
		ctx                 context.Context
		ceiling, overRaw    int
	}{
		{"W1c modern", "/mcp", mcp.Version20260728, context.Background(), modernCallCeiling, modernOverRawCeiling},
		{"W3c legacy", "/mcp-session", mcp.Version20251125, context.Background(), legacyCallCeiling, legacyOverRawCeiling},
		{"W1c modern, cancellable context", "/mcp", mcp.Version20260728, cancellable, modernCallCeiling + watchAllocs, modernOverRawCeiling + watchAllocs},
		{"W3c legacy, cancellable context", "/mcp-session", mcp.Version20251125, cancellable, legacyCallCeiling + watchAllocs, legacyOverRawCeiling + watchAllocs},
	} {
		ctx := tc.ctx
		c, err := client.Connect(ctx, streamable.New("http://alloc.test"+tc.path, &streamable.Options{HTTPClient: hc}),
			&client.Options{Info: mcp.Implementation{Name: "allocs", Version: "1"}, ProtocolVersion: tc.version})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		call := func() {
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
			if err != nil || string(res.StructuredContent) != `{"text":"hi"}` {
				t.Fatalf("%s: %v %+v", tc.name, err, res)
			}
		}
		call()
		kit := int(testing.AllocsPerRun(200, call))
		raw := int(testing.AllocsPerRun(200, func() { rawCall(t, ctx, hc, tc.path, tc.version) }))
		c.Close()
		t.Logf("%s: %d allocations a call (raw loop %d)", tc.name, kit, raw)
		if kit > tc.ceiling {
			t.Errorf("%s: %d allocations a call, ceiling %d", tc.name, kit, tc.ceiling)
		}
		if kit-raw > tc.overRaw {
			t.Errorf("%s: %d allocations over the raw loop's %d, ceiling %d", tc.name, kit-raw, raw, tc.overRaw)
		}
	}
}

// rawCall is the raw loop's call, the leanest honest one (as
// bench/clients' raw loop): the request built by appending bytes (the
// modern envelope constant), the header values set by their canonical
// names, the answer read once into a buffer of its Content-Length and
// decoded once into a struct with encoding/json.
func rawCall(t *testing.T, ctx context.Context, hc *http.Client, path, version string) {
	modern := version == mcp.Version20260728
	b := make([]byte, 0, 256)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, 1, 10)
	b = append(b, `,"method":"tools/call","params":{`...)
	if modern {
		b = append(b, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"allocs","version":"1"}},`...)
	}
	b = append(b, `"name":"echo","arguments":{"text":"hi"}}}`...)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://alloc.test"+path, bytes.NewReader(b))
	h := req.Header
	h["Content-Type"] = rawJSON
	h["Accept"] = rawAccept
	if modern {
		h["Mcp-Protocol-Version"] = rawModern
		h["Mcp-Method"] = []string{"tools/call"}
		h["Mcp-Name"] = []string{"echo"}
	} else {
		h["Mcp-Protocol-Version"] = rawLegacy
		h["Mcp-Session-Id"] = rawSession
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		ID     int `json:"id"`
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent struct {
				Text string `json:"text"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	answer := make([]byte, resp.ContentLength)
	_, err = io.ReadFull(resp.Body, answer)
	resp.Body.Close()
	if err == nil {
		err = json.Unmarshal(answer, &out)
	}
	if err != nil || out.ID != 1 || out.Result.StructuredContent.Text != "hi" || len(out.Result.Content) != 1 {
		t.Fatalf("raw: %v %+v", err, out)
	}
}

// The raw loop's header values, shared by its requests.
var (
	rawJSON    = []string{"application/json"}
	rawAccept  = []string{"application/json, text/event-stream"}
	rawModern  = []string{mcp.Version20260728}
	rawLegacy  = []string{mcp.Version20251125}
	rawSession = []string{"s1"}
)

// allocServer answers what the client sends: server/discover,
// initialize (session "s1" on /mcp-session), notifications, and
// tools/call of echo, in both eras.
func allocServer() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
				Meta struct {
					Version string `json:"io.modelcontextprotocol/protocolVersion"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		b := append([]byte(`{"jsonrpc":"2.0","id":`), req.ID...)
		switch req.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			b = append(b, `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"a","version":"1"}}}`...)
		case "server/discover":
			b = append(b, `,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"a","version":"1"}}}}`...)
		case "tools/call":
			b = append(b, `,"result":{`...)
			if req.Params.Meta.Version != "" {
				b = append(b, `"resultType":"complete",`...)
			}
			b = append(b, `"content":[{"type":"text","text":"ok"}],"structuredContent":{"text":"`...)
			b = append(b, req.Params.Arguments.Text...) // the tests' texts need no escaping
			b = append(b, `"}`...)
			if req.Params.Meta.Version != "" { // as mcpkit's server stamps every modern result
				b = append(b, `,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"a","version":"1"}}`...)
			}
			b = append(b, `}}`...)
		default:
			b = append(b, `,"error":{"code":-32601,"message":"Method not found"}}`...)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
}

// memTrip serves each request with h in the caller's goroutine.
type memTrip struct{ h http.Handler }

func (m memTrip) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := &memWriter{header: http.Header{}}
	if req.Body == nil {
		req.Body = http.NoBody
	}
	m.h.ServeHTTP(rec, req)
	req.Body.Close()
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{StatusCode: rec.status, Header: rec.header, Body: io.NopCloser(bytes.NewReader(rec.body)),
		ContentLength: int64(len(rec.body)), Request: req, ProtoMajor: 1, ProtoMinor: 1}, nil
}

type memWriter struct {
	header http.Header
	status int
	body   []byte
}

func (w *memWriter) Header() http.Header { return w.header }
func (w *memWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *memWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body = append(w.body, p...)
	return len(p), nil
}
