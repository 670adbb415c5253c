package bench_test

// Handler benchmarks (W1–W3, W5–W8, and W9's heap): each SDK's http.Handler driven directly, in memory,
// with no network, so that CPU and allocations per request compare
// without loopback noise:
//
//	go test -run '^$' -bench . -benchmem -count 5 | tee new.txt
//	go test -run '^$' -bench 'Handler/W1/mcpkit' -cpuprofile cpu.prof
//
// The harness itself (request reuse, a discarding ResponseWriter) costs
// the same for every server; the raw ceiling shows how much that is.

import (
	"bytes"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bench/servers"
	"github.com/mcpkit/mcpkit/bench/workload"
	"github.com/mcpkit/mcpkit/intercept"
)

// recorder is a reusable http.ResponseWriter.
type recorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}
func (r *recorder) Flush() {}

// SetReadDeadline is there as on net/http's own writer, so that the
// body's read bound takes the path a server's requests take (a deadline,
// not the timer kept for writers without one).
func (r *recorder) SetReadDeadline(time.Time) error { return nil }

func (r *recorder) reset() {
	clear(r.h)
	r.status = 0
	r.body.Reset()
}

// handlers returns each server's session-less and sessionful handlers,
// and its W5 (validated nested input) handler.
func handlers(b *testing.B) map[string][3]http.Handler {
	kitSL, kitSS := servers.MCPKit()
	kitN := servers.MCPKitNested()
	b.Cleanup(func() { kitSL.Close(); kitSS.Close(); kitN.Close() })
	goSL, goSS := servers.GoSDK()
	mgSL, mgSS := servers.MCPGo()
	return map[string][3]http.Handler{
		"mcpkit": {kitSL, kitSS, kitN},
		"gosdk":  {goSL, goSS, servers.GoSDKNested()},
		"mcpgo":  {mgSL, mgSS, servers.MCPGoNested()},
		"raw":    {servers.Raw(), nil, servers.RawNested()},
	}
}

// serve runs one request through h.
func serve(h http.Handler, req *http.Request, rd *bytes.Reader, body []byte, rec *recorder) {
	rd.Reset(body)
	req.Body = io.NopCloser(rd)
	req.ContentLength = int64(len(body))
	rec.reset()
	h.ServeHTTP(rec, req)
}

func BenchmarkHandler(b *testing.B) {
	hs := handlers(b)
	for _, wn := range []string{"W1", "W2", "W3", "W5", "W6"} {
		w := workload.All[wn]
		for _, name := range servers.Names {
			if !workload.Supported(name, wn) {
				continue
			}
			h := hs[name][0]
			if w.Session {
				h = hs[name][1]
			} else if w.Path == workload.PathNested {
				h = hs[name][2]
			}
			b.Run(wn+"/"+name, func(b *testing.B) {
				rec := &recorder{h: http.Header{}}
				rd := bytes.NewReader(nil)
				sid := ""
				if w.Session {
					sid = openSession(b, h, rec, rd)
				}
				req := w.HTTPRequest("http://127.0.0.1:8080", sid)
				b.ReportAllocs()
				for b.Loop() {
					serve(h, req, rd, w.Body, rec)
					if err := w.Check(rec.status, rec.body.Bytes()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func openSession(b *testing.B, h http.Handler, rec *recorder, rd *bytes.Reader) string {
	b.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp-session", nil)
	workload.SetHeaders(req.Header, workload.LegacyHeaders)
	serve(h, req, rd, workload.Initialize, rec)
	sid := rec.h.Get("Mcp-Session-Id")
	if rec.status != http.StatusOK || sid == "" {
		b.Fatalf("initialize: %d: %s", rec.status, rec.body.Bytes())
	}
	req.Header.Set("Mcp-Session-Id", sid)
	serve(h, req, rd, workload.Initialized, rec)
	if rec.status != http.StatusAccepted && rec.status != http.StatusOK {
		b.Fatalf("initialized: %d: %s", rec.status, rec.body.Bytes())
	}
	return sid
}

// BenchmarkIdleSessionHeap is W9 in memory: it opens idleSessions (10k) legacy
// sessions (initialize and notifications/initialized, never closed) on a
// fresh sessionful handler and reports the live heap and goroutines each
// one holds after runtime.GC: heap (HeapAlloc) and heap+stacks
// (HeapAlloc+StackInuse; a goroutine per session costs its stack). Run it
// with -benchtime 1x.
func BenchmarkIdleSessionHeap(b *testing.B) {
	const idleSessions = 10000
	build := map[string]func() (http.Handler, func()){
		"mcpkit": func() (http.Handler, func()) {
			sl, ss := servers.MCPKit()
			sl.Close()
			return ss, func() { ss.Close() }
		},
		"gosdk": func() (http.Handler, func()) { _, ss := servers.GoSDK(); return ss, func() {} },
		"mcpgo": func() (http.Handler, func()) { _, ss := servers.MCPGo(); return ss, func() {} },
	}
	for _, name := range servers.Names {
		mk, ok := build[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			var perHeap, perTotal, perG float64
			for b.Loop() {
				h, closeFn := mk()
				rec := &recorder{h: http.Header{}}
				rd := bytes.NewReader(nil)
				openSession(b, h, rec, rd) // warm whatever is built lazily
				heap0, stack0, g0 := liveHeap()
				for range idleSessions {
					openSession(b, h, rec, rd)
				}
				heap1, stack1, g1 := liveHeap()
				perHeap = float64(heap1-heap0) / idleSessions
				perTotal = float64(heap1+stack1-heap0-stack0) / idleSessions
				perG = float64(g1-g0) / idleSessions
				runtime.KeepAlive(h)
				closeFn()
			}
			b.ReportMetric(perHeap, "heap-B/session")
			b.ReportMetric(perTotal, "heap+stack-B/session")
			b.ReportMetric(perG, "goroutines/session")
		})
	}
}

// liveHeap returns the heap and the stacks in use after a GC, and the
// goroutine count.
func liveHeap() (heap, stack int64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc), int64(ms.StackInuse), runtime.NumGoroutine()
}

// BenchmarkList is W7 in memory: one op walks every page of tools/list
// (200 tools, 50 a page) and checks the names.
func BenchmarkList(b *testing.B) {
	kit := servers.MCPKitList()
	b.Cleanup(func() { kit.Close() })
	hs := map[string]http.Handler{"mcpkit": kit, "gosdk": servers.GoSDKList(), "mcpgo": servers.MCPGoList()}
	w := workload.All["W7"]
	for _, name := range servers.Names {
		h, ok := hs[name]
		if !ok {
			continue
		}
		b.Run("W7/"+name, func(b *testing.B) {
			rec := &recorder{h: http.Header{}}
			rd := bytes.NewReader(nil)
			req := w.HTTPRequest("http://127.0.0.1:8080", "")
			do := func(body []byte) (int, []byte, error) {
				serve(h, req, rd, body, rec)
				return rec.status, rec.body.Bytes(), nil
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := workload.ListAll(do); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProgress is W6p in memory: a call answered as an event stream
// of 10 notifications/progress and the result.
func BenchmarkProgress(b *testing.B) {
	kit := servers.MCPKitSSE()
	b.Cleanup(func() { kit.Close() })
	hs := map[string]http.Handler{"mcpkit": kit, "gosdk": servers.GoSDKSSE(), "mcpgo": servers.MCPGoSSE()}
	w := workload.All["W6p"]
	for _, name := range servers.Names {
		h, ok := hs[name]
		if !ok {
			continue
		}
		b.Run("W6p/"+name, func(b *testing.B) {
			rec := &recorder{h: http.Header{}}
			rd := bytes.NewReader(nil)
			req := w.HTTPRequest("http://127.0.0.1:8080", "")
			bad := 0
			b.ReportAllocs()
			for b.Loop() {
				serve(h, req, rd, w.Body, rec)
				if err := w.Check(rec.status, rec.body.Bytes()); err != nil {
					// mcp-go v1.2.1 now and then loses a notification sent
					// before its stream is upgraded: counted, not fatal.
					if name != "mcpgo" || !bytes.Contains([]byte(err.Error()), []byte("progress notifications (want")) {
						b.Fatal(err)
					}
					bad++
				}
			}
			if name == "mcpgo" {
				b.ReportMetric(float64(bad)/float64(b.N), "bad/op")
			}
		})
	}
}

// BenchmarkMRTR is W8 in memory (mcpkit only: the peers have no
// 2026-07-28 Multi Round-Trip Requests): one op is both rounds, the
// input_required answer with its sealed requestState and the retry.
func BenchmarkMRTR(b *testing.B) {
	h := servers.MCPKitMRTR()
	b.Cleanup(func() { h.Close() })
	w := workload.All["W8"]
	b.Run("W8/mcpkit", func(b *testing.B) {
		rec := &recorder{h: http.Header{}}
		rd := bytes.NewReader(nil)
		req := w.HTTPRequest("http://127.0.0.1:8080", "")
		do := func(body []byte) (int, []byte, error) {
			serve(h, req, rd, body, rec)
			return rec.status, bytes.Clone(rec.body.Bytes()), nil
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := workload.MRTRPair(do); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInterceptors is W1 (and W2) in memory on mcpkit with no
// interceptor, one no-op interceptor and OpenTelemetry on, side by side
// (servers.Variants; the figures are in README.md).
func BenchmarkInterceptors(b *testing.B) {
	ic, shutdown, err := servers.Tracing()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(shutdown)
	for _, wn := range []string{"W1", "W2"} {
		w := workload.All[wn]
		for _, v := range []struct {
			name string
			ics  []intercept.Interceptor
		}{{"none", nil}, {"noop", []intercept.Interceptor{servers.Noop}}, {"otel", []intercept.Interceptor{ic}}} {
			h, hs := servers.MCPKitWith(v.ics...)
			b.Cleanup(func() { h.Close(); hs.Close() })
			b.Run(wn+"/"+v.name, func(b *testing.B) {
				rec := &recorder{h: http.Header{}}
				rd := bytes.NewReader(nil)
				req := w.HTTPRequest("http://127.0.0.1:8080", "")
				b.ReportAllocs()
				for b.Loop() {
					serve(h, req, rd, w.Body, rec)
					if err := w.Check(rec.status, rec.body.Bytes()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
