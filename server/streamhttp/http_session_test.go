package streamhttp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/mcp"
)

// echoServer has one tool, "echo", that answers its text argument.
func echoServer() *server.Server {
	s := server.New(&server.Options{Logging: true})
	s.AddRawTool(&mcp.Tool{Name: "echo", InputSchema: []byte(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	return s
}

func TestHTTPSessionID(t *testing.T) {
	e := newHTTPEnv(t, echoServer(), nil)
	seen := map[string]bool{}
	for range 50 {
		id := e.ID()
		resp := e.Post("", httpenv.InitBody(id, "{}"))
		sid := resp.Header.Get("Mcp-Session-Id")
		m := e.ReadJSON(resp)
		e.Obs(wirecheck.ServerToClient, []byte(m.Raw))
		if m.Error != nil || string(m.ID) != strconv.FormatInt(id, 10) {
			t.Fatalf("initialize answer %s", m.Raw)
		}
		if len(sid) < 16 {
			t.Errorf("session id %q is too short to be unguessable", sid)
		}
		for i := 0; i < len(sid); i++ {
			if sid[i] < 0x21 || sid[i] > 0x7E {
				t.Errorf("session id %q has byte %#x outside visible ASCII", sid, sid[i])
			}
		}
		if seen[sid] {
			t.Fatalf("session id %q issued twice", sid)
		}
		seen[sid] = true
	}
	if n := e.h.SessionCount(); n != 50 {
		t.Errorf("SessionCount = %d, want 50", n)
	}
}

func TestHTTPSessionLifecycle(t *testing.T) {
	e := newHTTPEnv(t, echoServer(), nil)
	sid := e.Initialize("{}")

	t.Run("notification and response are accepted with 202", func(t *testing.T) {
		e := e.sub(t)
		e.Expect202(e.Do(http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`))
		// A response to no pending server request is still a response: accepted.
		e.Expect202(e.Do(http.MethodPost, sid, `{"jsonrpc":"2.0","id":"nobody-asked","result":{}}`))
		e.Expect202(e.Do(http.MethodPost, sid, `{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"declined"}}`))
	})

	t.Run("request works", func(t *testing.T) {
		e := e.sub(t)
		id := e.ID()
		m := e.RPC(sid, httpenv.ToolCall(id, "echo", `{"text":"hi"}`, ""))
		if text, isErr := httpenv.ToolText(t, m); isErr || text != `{"text":"hi"}` {
			t.Errorf("echo answered %q (isError %v)", text, isErr)
		}
	})

	t.Run("missing session id is 400", func(t *testing.T) {
		e := e.sub(t)
		e.ExpectStatus(e.Do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), http.StatusBadRequest)
		e.ExpectStatus(e.Do(http.MethodPost, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`), http.StatusBadRequest)
		e.ExpectStatus(e.Do(http.MethodGet, "", ""), http.StatusBadRequest)
		e.ExpectStatus(e.Do(http.MethodDelete, "", ""), http.StatusBadRequest)
	})

	t.Run("unknown session id is 404", func(t *testing.T) {
		e := e.sub(t)
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			body := ""
			if method == http.MethodPost {
				body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
			}
			e.ExpectStatus(e.Do(method, "NOSUCHSESSIONXXXXXXXXXXXXX", body), http.StatusNotFound)
		}
	})

	t.Run("protocol version header", func(t *testing.T) {
		e := e.sub(t)
		// Absent: the server assumes 2025-03-26, which it supports.
		m := e.ReadJSON(e.Do(http.MethodPost, sid, `{"jsonrpc":"2.0","id":100,"method":"tools/list"}`, httpenv.WithHeader("MCP-Protocol-Version", "")))
		if m.Error != nil {
			t.Errorf("tools/list without MCP-Protocol-Version: %s", m.Raw)
		}
		for _, v := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
			m := e.ReadJSON(e.Do(http.MethodPost, sid, `{"jsonrpc":"2.0","id":101,"method":"ping"}`, httpenv.WithHeader("MCP-Protocol-Version", v)))
			if m.Error != nil {
				t.Errorf("ping with MCP-Protocol-Version %s: %s", v, m.Raw)
			}
		}
		for _, v := range []string{"1999-01-01", "2026-07-28", "latest", "2025-11-2"} {
			for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
				body := ""
				if method == http.MethodPost {
					body = `{"jsonrpc":"2.0","id":102,"method":"ping"}`
				}
				e.ExpectStatus(e.Do(method, sid, body, httpenv.WithHeader("MCP-Protocol-Version", v)), http.StatusBadRequest)
			}
		}
		// The session survived every refusal, DELETE included.
		e.ReadJSON(e.Do(http.MethodPost, sid, `{"jsonrpc":"2.0","id":103,"method":"ping"}`))
	})

	t.Run("DELETE ends the session", func(t *testing.T) {
		e := e.sub(t)
		other := e.Initialize("{}")
		before := e.h.SessionCount()
		e.ExpectStatus(e.Do(http.MethodDelete, other, ""), http.StatusNoContent)
		if n := e.h.SessionCount(); n != before-1 {
			t.Errorf("SessionCount after DELETE = %d, want %d", n, before-1)
		}
		e.ExpectStatus(e.Do(http.MethodPost, other, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), http.StatusNotFound)
		e.ExpectStatus(e.Do(http.MethodGet, other, ""), http.StatusNotFound)
		e.ExpectStatus(e.Do(http.MethodDelete, other, ""), http.StatusNotFound)
		// The first session is untouched.
		e.ReadJSON(e.Do(http.MethodPost, sid, `{"jsonrpc":"2.0","id":104,"method":"ping"}`))
	})
}

// A failed initialize must not leave a session behind: the id is issued
// with an InitializeResult, and an error is not one.
func TestHTTPInitializeErrorNoSession(t *testing.T) {
	e := newHTTPEnv(t, echoServer(), nil)
	resp := e.Do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	m := e.ReadJSON(resp)
	if m.Error == nil || m.Error.Code != mcp.CodeInvalidParams {
		t.Fatalf("initialize without protocolVersion answered %s, want -32602", m.Raw)
	}
	if n := e.h.SessionCount(); n != 0 {
		t.Errorf("SessionCount after a failed initialize = %d, want 0", n)
	}
	if sid != "" {
		e.ExpectStatus(e.Do(http.MethodPost, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`), http.StatusNotFound)
	}
}

func TestHTTPHardening(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	t.Run("defaults", func(t *testing.T) {
		e := newHTTPEnv(t, echoServer(), nil)
		sid := e.Initialize("{}")
		port := e.TS.URL[strings.LastIndexByte(e.TS.URL, ':'):]
		for _, tc := range []struct {
			name string
			opts []httpenv.ReqOpt
			want int
		}{
			{"evil host", []httpenv.ReqOpt{httpenv.WithHost("evil.example.com")}, http.StatusForbidden},
			{"evil host with port", []httpenv.ReqOpt{httpenv.WithHost("evil.example.com" + port)}, http.StatusForbidden},
			{"evil origin", []httpenv.ReqOpt{httpenv.WithHeader("Origin", "http://evil.example.com")}, http.StatusForbidden},
			{"null origin", []httpenv.ReqOpt{httpenv.WithHeader("Origin", "null")}, http.StatusForbidden},
			{"loopback origin", []httpenv.ReqOpt{httpenv.WithHeader("Origin", "http://localhost:3000")}, http.StatusOK},
			{"loopback IP origin", []httpenv.ReqOpt{httpenv.WithHeader("Origin", "http://127.0.0.1"+port)}, http.StatusOK},
			{"IPv6 loopback origin", []httpenv.ReqOpt{httpenv.WithHeader("Origin", "http://[::1]:8080")}, http.StatusOK},
			{"localhost host", []httpenv.ReqOpt{httpenv.WithHost("localhost" + port)}, http.StatusOK},
			{"no origin", nil, http.StatusOK},
			{"text/plain", []httpenv.ReqOpt{httpenv.WithHeader("Content-Type", "text/plain")}, http.StatusUnsupportedMediaType},
			{"no content type", []httpenv.ReqOpt{httpenv.WithHeader("Content-Type", "")}, http.StatusUnsupportedMediaType},
			{"json with charset", []httpenv.ReqOpt{httpenv.WithHeader("Content-Type", "application/json; charset=utf-8")}, http.StatusOK},
			{"accept json only", []httpenv.ReqOpt{httpenv.WithHeader("Accept", "application/json")}, http.StatusNotAcceptable},
			{"accept sse only", []httpenv.ReqOpt{httpenv.WithHeader("Accept", "text/event-stream")}, http.StatusNotAcceptable},
			{"no accept", []httpenv.ReqOpt{httpenv.WithHeader("Accept", "")}, http.StatusNotAcceptable},
			{"accept split", []httpenv.ReqOpt{func(r *http.Request) {
				r.Header.Set("Accept", "application/json")
				r.Header.Add("Accept", "text/event-stream;q=0.9")
			}}, http.StatusOK},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := e.sub(t)
				resp := e.Do(http.MethodPost, sid, ping, tc.opts...)
				if tc.want == http.StatusOK {
					if m := e.ReadJSON(resp); m.Error != nil {
						t.Errorf("ping answered %s", m.Raw)
					}
					return
				}
				m := e.ExpectStatus(resp, tc.want)
				if m != nil && len(m.ID) > 0 {
					t.Errorf("transport error with an id: %s", m.Raw)
				}
			})
		}
		// GET and DELETE go through the same Host/Origin checks.
		e.ExpectStatus(e.Do(http.MethodGet, sid, "", httpenv.WithHeader("Origin", "http://evil.example.com")), http.StatusForbidden)
		e.ExpectStatus(e.Do(http.MethodDelete, sid, "", httpenv.WithHost("evil.example.com")), http.StatusForbidden)
		// A refused initialize creates nothing.
		before := e.h.SessionCount()
		e.ExpectStatus(e.Do(http.MethodPost, "", httpenv.InitBody(2, "{}"), httpenv.WithHeader("Origin", "http://evil.example.com")), http.StatusForbidden)
		if n := e.h.SessionCount(); n != before {
			t.Errorf("a refused initialize created a session")
		}
	})

	t.Run("malformed JSON", func(t *testing.T) {
		e := newHTTPEnv(t, echoServer(), nil)
		sid := e.Initialize("{}")
		for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"`, `not json`, `{"jsonrpc":"2.0","id":1,"method":"ping"}garbage`} {
			m := e.ExpectStatus(e.Do(http.MethodPost, sid, body), http.StatusBadRequest)
			if m == nil || m.Error.Code != -32700 {
				t.Errorf("%q: want a -32700 error, got %+v", body, m)
			} else if len(m.ID) != 0 {
				t.Errorf("%q: parse error with an id: %s", body, m.Raw)
			}
		}
		// Malformed JSON without a session is still a parse error, and
		// creates no session.
		m := e.ExpectStatus(e.Do(http.MethodPost, "", `{`), http.StatusBadRequest)
		if m == nil || m.Error.Code != -32700 {
			t.Errorf("want -32700, got %+v", m)
		}
		if n := e.h.SessionCount(); n != 1 {
			t.Errorf("SessionCount = %d, want 1", n)
		}
	})

	t.Run("methods", func(t *testing.T) {
		e := newHTTPEnv(t, echoServer(), nil)
		sid := e.Initialize("{}")
		for _, method := range []string{http.MethodPut, http.MethodPatch, "OPTIONS"} {
			resp := e.Do(method, sid, ping)
			allow := resp.Header.Get("Allow")
			e.ExpectStatus(resp, http.StatusMethodNotAllowed)
			for _, m := range []string{"GET", "POST", "DELETE"} {
				if !strings.Contains(allow, m) {
					t.Errorf("%s: Allow %q lacks %s", method, allow, m)
				}
			}
		}
	})

	t.Run("body cap", func(t *testing.T) {
		e := newHTTPEnv(t, echoServer(), &Options{MaxBodyBytes: 1024})
		sid := e.Initialize("{}")
		big := httpenv.ToolCall(5, "echo", `{"text":"`+strings.Repeat("x", 2000)+`"}`, "")
		e.ExpectStatus(e.Do(http.MethodPost, sid, big), http.StatusRequestEntityTooLarge)
		// Chunked (no Content-Length) too.
		e.ExpectStatus(e.Do(http.MethodPost, sid, big, func(r *http.Request) { r.ContentLength = -1 }), http.StatusRequestEntityTooLarge)
		// Just under the cap passes.
		small := httpenv.ToolCall(6, "echo", `{"text":"`+strings.Repeat("y", 900)+`"}`, "")
		if len(small) > 1024 {
			t.Fatalf("test body too big: %d", len(small))
		}
		if text, _ := httpenv.ToolText(t, e.ReadJSON(e.Post(sid, small))); !strings.Contains(text, "yyy") {
			t.Errorf("echo answered %q", text)
		}
	})

	t.Run("allow lists", func(t *testing.T) {
		e := newHTTPEnv(t, echoServer(), &Options{
			AllowedHosts:   []string{"mcp.example.com"},
			AllowedOrigins: []string{"https://app.example.com"},
		})
		good := httpenv.WithHost("mcp.example.com")
		resp := e.Do(http.MethodPost, "", httpenv.InitBody(1, "{}"), good, httpenv.WithHeader("Origin", "https://app.example.com"))
		sid := resp.Header.Get("Mcp-Session-Id")
		e.ReadJSON(resp)
		e.ReadJSON(e.Do(http.MethodPost, sid, ping, good))
		port := e.TS.URL[strings.LastIndexByte(e.TS.URL, ':'):]
		e.ReadJSON(e.Do(http.MethodPost, sid, ping, httpenv.WithHost("mcp.example.com"+port))) // host:port matches a host entry
		// The allow list replaces the loopback default.
		e.ExpectStatus(e.Do(http.MethodPost, sid, ping), http.StatusForbidden)
		e.ExpectStatus(e.Do(http.MethodPost, sid, ping, httpenv.WithHost("localhost")), http.StatusForbidden)
		e.ExpectStatus(e.Do(http.MethodPost, sid, ping, good, httpenv.WithHeader("Origin", "http://localhost")), http.StatusForbidden)
		e.ExpectStatus(e.Do(http.MethodPost, sid, ping, good, httpenv.WithHeader("Origin", "https://evil.example.com")), http.StatusForbidden)
		e.ExpectStatus(e.Do(http.MethodPost, sid, ping, good, httpenv.WithHeader("Origin", "https://app.example.com.evil.com")), http.StatusForbidden)
	})

	t.Run("DisableHostCheck", func(t *testing.T) {
		e := newHTTPEnv(t, echoServer(), &Options{DisableHostCheck: true})
		sid := e.Initialize("{}")
		e.ReadJSON(e.Do(http.MethodPost, sid, ping, httpenv.WithHost("evil.example.com"), httpenv.WithHeader("Origin", "http://evil.example.com")))
	})
}

// TestJSONAnswerLength: a JSON answer of any length goes out with its
// Content-Length, never chunked: a short one's length written by
// net/http once the handler is done, a long one's by the handler. The
// lengths cross net/http's buffer (unchunkedMax) on a session and
// without one.
func TestJSONAnswerLength(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			e := newHTTPEnv(t, echoServer(), &Options{Stateless: stateless})
			session := ""
			if !stateless {
				session = e.Initialize("{}")
			}
			// Text of n bytes makes an answer of about n + 88: every length
			// around unchunkedMax, and some well under and over it.
			sizes := []int{10, 1000, 2 * unchunkedMax}
			for n := unchunkedMax - 88 - 8; n <= unchunkedMax-88+8; n++ {
				sizes = append(sizes, n)
			}
			lengths := map[int]bool{}
			for _, n := range sizes {
				id := e.ID()
				call := httpenv.ToolCall(id, "echo", `{"text":"`+strings.Repeat("x", n)+`"}`, "")
				resp := e.Post(session, call, httpenv.WithHeader("MCP-Protocol-Version", mcp.Version20251125))
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("text of %d: status %d, %v", n, resp.StatusCode, err)
				}
				lengths[len(body)] = true
				if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 {
					t.Errorf("answer of %d bytes: Content-Length %d, Transfer-Encoding %v", len(body), resp.ContentLength, resp.TransferEncoding)
				}
				if got := resp.Header.Values("Content-Type"); len(got) != 1 || got[0] != "application/json" {
					t.Errorf("Content-Type %q", got)
				}
			}
			if !lengths[unchunkedMax] || !lengths[unchunkedMax+1] {
				t.Errorf("the answers' lengths %v miss %d or %d: the sizes no longer cross net/http's buffer", lengths, unchunkedMax, unchunkedMax+1)
			}
		})
	}
}
