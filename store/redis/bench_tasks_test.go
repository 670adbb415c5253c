package redisstore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/store"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// BenchmarkTaskThroughput measures 2025-11-25 tasks end to end: a
// tools/call that becomes a task (the record stored), the task settling
// (a compare-and-set), and tasks/result returning its result — from
// GOMAXPROCS×4 clients at once, each with its own legacy session, behind
// the round-robin reverse proxy:
//
//   - memory-1: one instance with the in-memory stores;
//   - redis-1: one instance on Redis (sessions, events, tasks, broker);
//   - redis-3: three instances sharing Redis: tasks/result usually lands
//     on an instance that does not run the task and waits for the
//     owner's broadcast (or reads a task already settled).
//
// tasks/s is the figure to compare on a quiet machine; proc-µs/op (this
// process: instances, proxy and clients) and redis-µs/op (redis-server)
// are the CPU each task costs, which a busy machine distorts less.
//
//	cd store/redis && go test -run '^$' -bench TaskThroughput -benchtime 2000x
func BenchmarkTaskThroughput(b *testing.B) {
	redistest.Need(b)
	newServer := func(tasks store.TaskStore) *server.Server {
		s := server.New(&server.Options{TaskStore: tasks})
		server.AddTool(s, &mcp.Tool{Name: "quick", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
			func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "done", nil })
		return s
	}
	run := func(b *testing.B, handlers []http.Handler) {
		var urls []*url.URL
		for _, h := range handlers {
			ts := httptest.NewServer(h)
			b.Cleanup(ts.Close)
			u, _ := url.Parse(ts.URL)
			urls = append(urls, u)
		}
		var next atomic.Uint64
		tr := &http.Transport{MaxIdleConnsPerHost: 256}
		b.Cleanup(tr.CloseIdleConnections)
		p := &httputil.ReverseProxy{Transport: tr, FlushInterval: -1, Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(urls[next.Add(1)%uint64(len(urls))])
			r.Out.Host = r.In.Host
		}}
		front := httptest.NewServer(p)
		b.Cleanup(front.Close)
		b.SetParallelism(4)
		b.ResetTimer()
		cpu := startCPU(b)
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			cl, err := client.Connect(ctx, streamable.New(front.URL, nil), &client.Options{ProtocolVersion: mcp.LatestLegacy})
			if err != nil {
				b.Error(err)
				return
			}
			defer cl.Close()
			for pb.Next() {
				task, err := cl.StartToolTask(ctx, &mcp.CallToolParams{Name: "quick"})
				if err != nil || task.ID == "" {
					b.Errorf("tools/call as a task: %+v, %v", task, err)
					return
				}
				res, err := cl.TaskResult(ctx, task.ID)
				if err != nil || res.IsError {
					b.Errorf("tasks/result: %+v, %v", res, err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
		cpu.report(b, b.N)
	}
	b.Run("memory-1", func(b *testing.B) {
		h := streamhttp.NewHandler(newServer(nil), nil)
		b.Cleanup(func() { h.Close() })
		run(b, []http.Handler{h})
	})
	onRedis := func(b *testing.B, n int) {
		p := "benchtasks:"
		b.Cleanup(func() {
			keys, _ := rdb.Keys(context.Background(), p+"*").Result()
			if len(keys) > 0 {
				rdb.Del(context.Background(), keys...)
			}
		})
		sessions := NewSessionStore(rdb, &SessionStoreOptions{Prefix: p})
		events := NewEventStore(rdb, &EventStoreOptions{Prefix: p})
		tasks := NewTaskStore(rdb, &TaskStoreOptions{Prefix: p})
		var handlers []http.Handler
		for range n {
			br, err := NewBroker(context.Background(), rdb, &BrokerOptions{Prefix: p})
			if err != nil {
				b.Fatal(err)
			}
			s := newServer(tasks)
			h := streamhttp.NewHandler(s, &streamhttp.Options{SessionStore: sessions, EventStore: events, Broker: br})
			b.Cleanup(func() {
				h.Close()
				_ = s.Shutdown(context.Background())
				br.Close()
			})
			handlers = append(handlers, h)
		}
		run(b, handlers)
	}
	b.Run("redis-1", func(b *testing.B) { onRedis(b, 1) })
	b.Run("redis-3", func(b *testing.B) { onRedis(b, 3) })
}
