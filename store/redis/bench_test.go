package redisstore

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// BenchmarkSessionfulToolsCall measures one legacy tools/call on an
// established session (2025-11-25, JSON answer), client and server in
// this process over loopback:
//
//   - memory: one instance with the in-memory stores, called directly;
//
//   - memory-proxy: the same instance behind the reverse proxy;
//
//   - redis-proxy: three instances sharing Redis (sessions, events,
//     broker) behind the round-robin proxy: each call lands on the next
//     instance, which serves it from its copy of the session (read from
//     Redis with one GETEX once per SessionCheckInterval).
//
//     cd store/redis && go test -run '^$' -bench SessionfulToolsCall -benchmem
func BenchmarkSessionfulToolsCall(b *testing.B) {
	redistest.Need(b)
	newServer := func() *server.Server {
		s := server.New(nil)
		type in struct {
			Text string `json:"text"`
		}
		server.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallToolRequest, in in) (string, error) {
			return in.Text, nil
		})
		return s
	}
	run := func(b *testing.B, handlers []http.Handler, viaProxy bool) {
		var urls []*url.URL
		for _, h := range handlers {
			ts := httptest.NewServer(h)
			b.Cleanup(ts.Close)
			u, _ := url.Parse(ts.URL)
			urls = append(urls, u)
		}
		endpoint := urls[0].String()
		if viaProxy {
			var next atomic.Uint64
			tr := &http.Transport{MaxIdleConnsPerHost: 64}
			b.Cleanup(tr.CloseIdleConnections)
			p := &httputil.ReverseProxy{Transport: tr, FlushInterval: -1, Rewrite: func(r *httputil.ProxyRequest) {
				r.SetURL(urls[next.Add(1)%uint64(len(urls))])
				r.Out.Host = r.In.Host
			}}
			ts := httptest.NewServer(p)
			b.Cleanup(ts.Close)
			endpoint = ts.URL
		}
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		b.Cleanup(hc.CloseIdleConnections)
		post := func(sid, body string) (*http.Response, string) {
			req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if sid != "" {
				req.Header.Set("Mcp-Session-Id", sid)
				req.Header.Set("Mcp-Protocol-Version", mcp.Version20251125)
			}
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp, string(out)
		}
		resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		sid := resp.Header.Get("Mcp-Session-Id")
		if sid == "" {
			b.Fatal("no session")
		}
		post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
		b.ReportAllocs()
		b.ResetTimer()
		cpu := startCPU(b)
		for b.Loop() {
			resp, body := post(sid, call)
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"text":"hello"`) {
				b.Fatalf("%s: %s", resp.Status, body)
			}
		}
		cpu.report(b, b.N)
	}
	b.Run("memory", func(b *testing.B) {
		h := streamhttp.NewHandler(newServer(), nil)
		b.Cleanup(func() { h.Close() })
		run(b, []http.Handler{h}, false)
	})
	b.Run("memory-proxy", func(b *testing.B) {
		h := streamhttp.NewHandler(newServer(), nil)
		b.Cleanup(func() { h.Close() })
		run(b, []http.Handler{h}, true)
	})
	b.Run("redis-proxy", func(b *testing.B) {
		p := "bench:"
		b.Cleanup(func() {
			keys, _ := rdb.Keys(context.Background(), p+"*").Result()
			if len(keys) > 0 {
				rdb.Del(context.Background(), keys...)
			}
		})
		sessions := NewSessionStore(rdb, &SessionStoreOptions{Prefix: p})
		events := NewEventStore(rdb, &EventStoreOptions{Prefix: p})
		var handlers []http.Handler
		for range 3 {
			br, err := NewBroker(context.Background(), rdb, &BrokerOptions{Prefix: p})
			if err != nil {
				b.Fatal(err)
			}
			h := streamhttp.NewHandler(newServer(), &streamhttp.Options{SessionStore: sessions, EventStore: events, Broker: br})
			b.Cleanup(func() { h.Close(); br.Close() })
			handlers = append(handlers, h)
		}
		run(b, handlers, true)
	})
}
