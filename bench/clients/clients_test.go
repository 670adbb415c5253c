package clients_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/bench/clients"
	"github.com/mcpkit/mcpkit/bench/servers"
)

// TestEveryClient runs every client's every workload, in memory and over
// loopback, and checks the answers (Call fails on a wrong one).
func TestEveryClient(t *testing.T) {
	srv := httptest.NewServer(servers.ClientServer())
	defer srv.Close()
	for _, via := range []struct {
		name string
		base string
		hc   *http.Client
	}{
		{"memory", "http://bench.test", clients.Tuned(0, clients.InMemory(servers.ClientServer()))},
		{"loopback", srv.URL, clients.Tuned(4, nil)},
	} {
		for _, w := range clients.Workloads {
			for _, sdk := range clients.SDKs {
				if !clients.Supported(sdk, w) {
					if _, err := clients.New(t.Context(), sdk, w, via.base, via.hc); err == nil {
						t.Errorf("%s %s: no error for an unsupported workload", sdk, w)
					}
					continue
				}
				t.Run(via.name+"/"+w+"/"+sdk, func(t *testing.T) {
					ctx := t.Context()
					c, err := clients.New(ctx, sdk, w, via.base, via.hc)
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					for range 3 {
						if err := c.Call(ctx); err != nil {
							t.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// TestClientServerRefuses: the server answers a wrong retry, a bad
// cursor, an unknown method and a request without its session with an
// error, so that a client that sent them would fail its check.
func TestClientServerRefuses(t *testing.T) {
	h := servers.ClientServer()
	env := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	for _, tc := range []struct {
		name, path, body, want string
		status                 int
	}{
		{"wrong state", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + env + `,"name":"confirm","arguments":{"text":"a"},"requestState":"forged","inputResponses":{"ok":{"action":"accept"}}}}`, `"code":-32602`, 200},
		{"declined", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + env + `,"name":"confirm","arguments":{"text":"a"},"requestState":"` + servers.ClientRequestState + `","inputResponses":{"ok":{"action":"decline"}}}}`, `"code":-32602`, 200},
		{"bad cursor", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"7"}}`, `"code":-32602`, 200},
		{"unknown method", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"nope"}`, `"code":-32601`, 200},
		{"no session", "/mcp-session", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`, "no session", 404},
		{"not JSON", "/mcp", `{`, "bad JSON", 400},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, tc.path, bytes.NewReader([]byte(tc.body)))
		h.ServeHTTP(rec, req)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, rec.Code, rec.Body, tc.status, tc.want)
		}
	}
}
