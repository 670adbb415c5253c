package servers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bench/servers"
	"github.com/mcpkit/mcpkit/bench/workload"
)

type answer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   json.RawMessage `json:"error"`
	Result  *struct {
		ResultType string `json:"resultType"`
		IsError    bool   `json:"isError"`
		Content    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent *servers.EchoOut `json:"structuredContent"`
	} `json:"result"`
}

// TestChurn runs W4 cycles (initialize, initialized, call, DELETE) on
// every server with sessions, through the load generator's connection.
func TestChurn(t *testing.T) {
	w := workload.All["W4"]
	for _, name := range servers.Names {
		if !workload.Supported(name, "W4") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			h, closeFn, err := servers.New(name)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			defer func() { ts.Close(); closeFn() }()
			c, err := workload.Dial(strings.TrimPrefix(ts.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i := 0; i < 5; i++ {
				if err := c.Cycle(w, time.Now().Add(5*time.Second)); err != nil {
					t.Fatalf("cycle %d: %v", i, err)
				}
			}
		})
	}
}

// TestEcho starts every server in-process and checks a modern call (W1),
// a session-less legacy call (W2), a sessionful legacy call (W3), the
// validated nested input (W5) and the 64 KB result (W6), each through
// both the net/http client and the load generator's connection.
func TestEcho(t *testing.T) {
	for _, name := range servers.Names {
		t.Run(name, func(t *testing.T) {
			h, closeFn, err := servers.New(name)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			defer func() { ts.Close(); closeFn() }()
			client := ts.Client()
			for _, wn := range []string{"W1", "W2", "W3", "W5", "W6"} {
				if !workload.Supported(name, wn) {
					continue
				}
				w := workload.All[wn]
				t.Run(wn, func(t *testing.T) {
					sid := ""
					if w.Session {
						sid = openSession(t, client, ts.URL+w.Path)
					}
					for i := 0; i < 3; i++ {
						resp, err := client.Do(w.HTTPRequest(ts.URL, sid))
						if err != nil {
							t.Fatal(err)
						}
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						checkAnswer(t, wn, resp, body)
					}
					// The load generator's own connection and check.
					addr := strings.TrimPrefix(ts.URL, "http://")
					c, err := workload.Dial(addr)
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					if w.Session {
						if sid, err = c.OpenSession(w.Path, time.Now().Add(5*time.Second)); err != nil {
							t.Fatal(err)
						}
					}
					req := w.Request(addr, sid)
					for i := 0; i < 3; i++ {
						st, body, err := c.Do(req, time.Now().Add(5*time.Second))
						if err != nil {
							t.Fatal(err)
						}
						if err := w.Check(st, body); err != nil {
							t.Fatal(err)
						}
					}
				})
			}
		})
	}
}

func openSession(t *testing.T, client *http.Client, url string) string {
	t.Helper()
	post := func(body []byte, sid string) *http.Response {
		r, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
		workload.SetHeaders(r.Header, workload.LegacyHeaders)
		if sid != "" {
			r.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := client.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(workload.Initialize, "")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q: %s", resp.StatusCode, sid, b)
	}
	resp = post(workload.Initialized, sid)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 && resp.StatusCode != 200 {
		t.Fatalf("initialized: %d: %s", resp.StatusCode, b)
	}
	return sid
}

func checkAnswer(t *testing.T, wn string, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q: %s", ct, body)
	}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if a.JSONRPC != "2.0" || string(a.ID) != "1" || a.Error != nil || a.Result == nil || a.Result.IsError {
		t.Fatalf("not a successful answer to id 1: %s", body)
	}
	want := workload.Text
	if wn == "W6" {
		want = workload.BlobText
	}
	if sc := a.Result.StructuredContent; sc == nil || sc.Text != want {
		t.Fatalf("structuredContent: %s", body)
	}
	if len(a.Result.Content) != 1 || a.Result.Content[0].Type != "text" || !strings.Contains(a.Result.Content[0].Text, want) {
		t.Fatalf("content: %s", body)
	}
	modern := wn == "W1" || wn == "W5" || wn == "W6"
	if modern && a.Result.ResultType != "complete" {
		t.Fatalf("modern answer without resultType complete: %s", body)
	}
	if !modern && a.Result.ResultType != "" {
		t.Errorf("legacy answer with resultType: %s", body)
	}
	if err := workload.All[wn].Check(resp.StatusCode, body); err != nil {
		t.Fatal(err)
	}
	t.Logf("%.300s", body)
}

// TestList walks W7 (tools/list of 200 tools, 50 a page) on every server
// but raw, with the net/http client and the load generator's connection.
func TestList(t *testing.T) {
	w := workload.All["W7"]
	for _, name := range servers.Names {
		if !workload.Supported(name, "W7") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			h, closeFn, err := servers.New(name)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			defer func() { ts.Close(); closeFn() }()
			client := ts.Client()
			pages := 0
			err = workload.ListAll(func(body []byte) (int, []byte, error) {
				pages++
				r, _ := http.NewRequest(http.MethodPost, ts.URL+w.Path, strings.NewReader(string(body)))
				workload.SetHeaders(r.Header, w.Headers)
				resp, err := client.Do(r)
				if err != nil {
					return 0, nil, err
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				return resp.StatusCode, b, err
			})
			if err != nil {
				t.Fatal(err)
			}
			// mcp-go adds an empty page after a full last page.
			if want := servers.ListTools / servers.ListPageSize; pages != want && (name != "mcpgo" || pages != want+1) {
				t.Errorf("%d pages, want %d", pages, want)
			}
			c, err := workload.Dial(strings.TrimPrefix(ts.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i := 0; i < 3; i++ {
				if err := c.ListCycle(w, time.Now().Add(5*time.Second)); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestProgress checks W6p (10 progress notifications on an event stream,
// then the result) on every server but raw, with both clients.
func TestProgress(t *testing.T) {
	w := workload.All["W6p"]
	for _, name := range servers.Names {
		if !workload.Supported(name, "W6p") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			h, closeFn, err := servers.New(name)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			defer func() { ts.Close(); closeFn() }()
			resp, err := ts.Client().Do(w.HTTPRequest(ts.URL, ""))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Fatalf("Content-Type %q: %s", ct, body)
			}
			check := func(st int, body []byte) {
				t.Helper()
				err := w.Check(st, body)
				if err != nil && name == "mcpgo" && strings.Contains(err.Error(), "progress notifications (want") {
					// mcp-go v1.2.1 now and then loses a notification sent
					// before its stream is upgraded to SSE.
					t.Logf("known mcp-go loss: %.100v", err)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			check(resp.StatusCode, body)
			c, err := workload.Dial(strings.TrimPrefix(ts.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			req := w.Request(c.Addr(), "")
			for i := 0; i < 3; i++ {
				st, body, err := c.Do(req, time.Now().Add(5*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				check(st, body)
			}
		})
	}
}

// TestMRTR runs W8 (two rounds, sealed requestState) on mcpkit.
func TestMRTR(t *testing.T) {
	w := workload.All["W8"]
	h, closeFn, err := servers.New("mcpkit")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer func() { ts.Close(); closeFn() }()
	client := ts.Client()
	err = workload.MRTRPair(func(body []byte) (int, []byte, error) {
		r, _ := http.NewRequest(http.MethodPost, ts.URL+w.Path, strings.NewReader(string(body)))
		workload.SetHeaders(r.Header, w.Headers)
		resp, err := client.Do(r)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		t.Logf("%.400s", b)
		return resp.StatusCode, b, err
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := workload.Dial(strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 3; i++ {
		if err := c.MRTRCycle(w, time.Now().Add(5*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNestedInvalid checks that every server validates W5's input: each
// of workload.NestedInvalid breaks one constraint of the schema and must
// be refused (an isError result or a JSON-RPC error), never answered.
func TestNestedInvalid(t *testing.T) {
	w := workload.All["W5"]
	for _, name := range servers.Names {
		t.Run(name, func(t *testing.T) {
			h, closeFn, err := servers.New(name)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			defer func() { ts.Close(); closeFn() }()
			for what, args := range workload.NestedInvalid {
				r, _ := http.NewRequest(http.MethodPost, ts.URL+w.Path, strings.NewReader(string(workload.NestedBody(args))))
				workload.SetHeaders(r.Header, w.Headers)
				resp, err := ts.Client().Do(r)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var a answer
				_ = json.Unmarshal(body, &a)
				refused := a.Error != nil || a.Result != nil && a.Result.IsError
				if !refused || strings.Contains(string(body), workload.NestedWant) {
					t.Errorf("%s: not refused: %d %s", what, resp.StatusCode, body)
					continue
				}
				t.Logf("%s: %d %.200s", what, resp.StatusCode, body)
			}
		})
	}
}

// TestIdleSessions runs W9 on a small scale on every server with
// sessions: it opens 200 sessions over 8 connections, closes them, and
// calls every session afterwards (the load generator's own functions).
func TestIdleSessions(t *testing.T) {
	for _, name := range servers.Names {
		if !workload.Supported(name, "W9") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			h, closeFn, err := servers.New(name)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			defer func() { ts.Close(); closeFn() }()
			addr := strings.TrimPrefix(ts.URL, "http://")
			sids, err := workload.OpenSessions(addr, servers.PathSession, 200, 8, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if len(sids) != 200 {
				t.Fatalf("%d sessions", len(sids))
			}
			if err := workload.CallSessions(addr, servers.PathSession, sids, 8, 5*time.Second); err != nil {
				t.Fatal(err)
			}
		})
	}
}
