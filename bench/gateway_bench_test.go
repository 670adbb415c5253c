package bench_test

// Gateway benchmarks (issue 23): what the gateway adds to a call. The
// same tools/call of the typed echo tool, made by the mcpkit client
// directly to an mcpkit server ("direct") and through a gateway in front
// of that server ("gateway"), for every client era and, through the
// gateway, every upstream era:
//
//   - BenchmarkGatewayMemory: both hops over transport/memory pairs, so
//     allocations per call are exact and ns/op is the CPU of the whole
//     path (client, gateway, server) with no network;
//   - BenchmarkGatewayMemoryParallel: the same with many callers sharing
//     one client, for throughput (ns/op is the inverse of calls/s);
//   - BenchmarkGatewayHTTP: both hops over Streamable HTTP on loopback
//     (httptest servers), callers sharing one client; it reports p50 and
//     p99 latency per call besides ns/op (the inverse of throughput).
//     The "default-http-client" case leaves the gateway's upstream on the
//     transport's default http.Client (2 idle connections per host).
//
// cpu-µs/op is the process's CPU time per call: client, gateway and
// server share the process, so it is the whole path's.
//
//	go test -run '^$' -bench Gateway -benchmem -count 5
//
// Every answer is checked.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/bench/clients"
	"github.com/mcpkit/mcpkit/bench/servers"
	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// gwEras are the eras of the client and of the gateway's upstream.
var gwEras = []client.Era{client.EraLegacy, client.EraModern}

func gwVersion(e client.Era) string {
	if e == client.EraLegacy {
		return mcp.LatestLegacy
	}
	return mcp.Version20260728
}

// gwEchoServer is the server every case ends at: the typed echo tool.
func gwEchoServer(b testing.TB) *server.Server {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "bench-echo", Version: "1.0.0"}})
	err := server.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text"},
		func(ctx context.Context, req *server.CallToolRequest, in servers.EchoIn) (servers.EchoOut, error) {
			return servers.EchoOut(in), nil
		})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// gwCase is one path a call takes: direct, or through a gateway whose
// upstream speaks the given era.
type gwCase struct {
	name    string
	gateway bool
	up      client.Era
	// defaultHTTP (HTTP only) leaves the gateway's upstream connection on
	// the transport's default http.Client, which keeps 2 idle connections
	// per host, instead of one that keeps one per caller.
	defaultHTTP bool
}

func gwCases() []gwCase {
	cs := []gwCase{{name: "direct"}}
	for _, up := range gwEras {
		cs = append(cs, gwCase{name: "gateway/upstream=" + up.String(), gateway: true, up: up})
	}
	return cs
}

// memServe serves s on in-memory connections, one per connect, and waits
// for them at cleanup.
type memServe struct {
	s  *server.Server
	wg sync.WaitGroup
}

func (m *memServe) connect(ctx context.Context) (transport.Conn, error) {
	a, b := memory.NewPair()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		_ = m.s.Serve(context.Background(), b)
	}()
	return a, nil
}

// startGateway starts a gateway in front of one upstream reached by
// connect or url, speaking era up to it, and fails b unless it is ready.
func startGateway(b testing.TB, up client.Era, connect func(context.Context) (transport.Conn, error), url string, hc *http.Client) *gateway.Gateway {
	b.Helper()
	// The callers share one client, which the gateway counts as one:
	// let it have them all in flight (the default cap is 8).
	g, err := gateway.New(&gateway.Options{MaxInFlightPerClient: gwCallers, Upstreams: []gateway.Upstream{{
		Name: "echo", Connect: connect, URL: url, HTTPClient: hc, ProtocolVersion: gwVersion(up), HealthInterval: -1,
	}}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if h := g.Health()[0]; h.State != gateway.StateReady || h.Era != up.String() || h.Tools != 1 {
		g.Close()
		b.Fatalf("gateway upstream: %+v", h)
	}
	return g
}

// memClient connects a client in era down to s over an in-memory pair;
// stop closes it and waits for the server's side.
func memClient(b testing.TB, s *server.Server, down client.Era) (c *client.Client, stop func()) {
	b.Helper()
	m := &memServe{s: s}
	conn, _ := m.connect(context.Background())
	c, err := client.Connect(context.Background(), conn, &client.Options{ProtocolVersion: gwVersion(down)})
	if err != nil {
		b.Fatal(err)
	}
	return c, func() { c.Close(); m.wg.Wait() }
}

// memPath builds the in-memory path of cs for a client in era down.
func memPath(b testing.TB, cs gwCase, down client.Era) *client.Client {
	b.Helper()
	s := gwEchoServer(b)
	if !cs.gateway {
		c, stop := memClient(b, s, down)
		b.Cleanup(stop)
		return c
	}
	up := &memServe{s: s}
	g := startGateway(b, cs.up, up.connect, "", nil)
	c, stop := memClient(b, g.Server(), down)
	b.Cleanup(func() { stop(); g.Close(); up.wg.Wait() })
	return c
}

// httpPath builds the loopback HTTP path of cs for a client in era down:
// the server (and the gateway) behind httptest servers, the upstream
// reached by its URL. The client and the gateway's upstream connection
// keep an idle connection per caller (clients.Tuned), unless
// cs.defaultHTTP.
func httpPath(b testing.TB, cs gwCase, down client.Era) *client.Client {
	b.Helper()
	h := streamhttp.NewHandler(gwEchoServer(b), nil)
	ts := httptest.NewServer(h)
	front := ts
	var g *gateway.Gateway
	var gh *streamhttp.Handler
	upHC := clients.Tuned(gwCallers, nil)
	if cs.gateway {
		hc := upHC
		if cs.defaultHTTP {
			hc = nil
		}
		g = startGateway(b, cs.up, nil, ts.URL, hc)
		gh = streamhttp.NewHandler(g.Server(), nil)
		front = httptest.NewServer(gh)
	}
	hc := clients.Tuned(gwCallers, nil)
	c, err := client.Connect(context.Background(), streamable.New(front.URL, &streamable.Options{HTTPClient: hc}), &client.Options{ProtocolVersion: gwVersion(down)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c.Close()
		hc.CloseIdleConnections()
		upHC.CloseIdleConnections()
		if g != nil {
			gh.Close()
			front.Close()
			g.Close()
		}
		h.Close()
		ts.Close()
	})
	return c
}

// echoCall makes one call and checks its answer.
type echoCall struct {
	params mcp.CallToolParams
	want   string
}

func newEchoCall() *echoCall {
	args, _ := json.Marshal(servers.EchoIn{Text: "hello gateway"})
	return &echoCall{params: mcp.CallToolParams{Name: "echo", Arguments: jsontext.Value(args)}, want: "hello gateway"}
}

func (e *echoCall) do(ctx context.Context, c *client.Client) error {
	p := e.params
	res, err := c.CallTool(ctx, &p)
	if err != nil {
		return err
	}
	var out servers.EchoOut
	if res.IsError || json.Unmarshal(res.StructuredContent, &out) != nil || out.Text != e.want {
		return fmt.Errorf("bad answer: %+v", res)
	}
	return nil
}

// TestGatewayPaths checks every path the benchmarks measure: the echo
// answers, in memory and over HTTP, for each client era, directly and
// through the gateway to each upstream era.
func TestGatewayPaths(t *testing.T) {
	for _, down := range gwEras {
		for _, cs := range gwCases() {
			for _, hop := range []string{"memory", "http"} {
				t.Run(fmt.Sprintf("%s/client=%s/%s", hop, down, cs.name), func(t *testing.T) {
					var c *client.Client
					if hop == "memory" {
						c = memPath(t, cs, down)
					} else {
						c = httpPath(t, cs, down)
					}
					e := newEchoCall()
					for range 3 {
						if err := e.do(t.Context(), c); err != nil {
							t.Fatal(err)
						}
					}
					if got := c.Era(); got != down {
						t.Fatalf("client era = %s, want %s", got, down)
					}
				})
			}
		}
	}
}

func BenchmarkGatewayMemory(b *testing.B) {
	for _, down := range gwEras {
		for _, cs := range gwCases() {
			b.Run("client="+down.String()+"/"+cs.name, func(b *testing.B) {
				c := memPath(b, cs, down)
				e := newEchoCall()
				ctx := context.Background()
				if err := e.do(ctx, c); err != nil { // warm what is built lazily
					b.Fatal(err)
				}
				b.ReportAllocs()
				cpu := processCPU()
				for b.Loop() {
					if err := e.do(ctx, c); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// gwCallers is how many goroutines share one client in the parallel
// cases (b.SetParallelism times GOMAXPROCS).
const gwCallers = 16

func BenchmarkGatewayMemoryParallel(b *testing.B) {
	for _, down := range gwEras {
		for _, cs := range gwCases() {
			b.Run("client="+down.String()+"/"+cs.name, func(b *testing.B) {
				c := memPath(b, cs, down)
				runCallers(b, c, gwCallers, false)
			})
		}
	}
}

func BenchmarkGatewayHTTP(b *testing.B) {
	cases := append(gwCases(), gwCase{name: "gateway/upstream=modern/default-http-client", gateway: true, up: client.EraModern, defaultHTTP: true})
	for _, callers := range []int{1, gwCallers} {
		for _, down := range gwEras {
			for _, cs := range cases {
				b.Run(fmt.Sprintf("c=%d/client=%s/%s", callers, down, cs.name), func(b *testing.B) {
					c := httpPath(b, cs, down)
					runCallers(b, c, callers, true)
				})
			}
		}
	}
}

// runCallers makes b.N calls from about callers goroutines sharing c (a
// multiple of GOMAXPROCS; 1: one goroutine, the calls one after the
// other); with latency it reports the p50 and p99 of the calls in
// microseconds.
func runCallers(b *testing.B, c *client.Client, callers int, latency bool) {
	e := newEchoCall()
	ctx := context.Background()
	if err := e.do(ctx, c); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	var all []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	if callers == 1 {
		for b.Loop() {
			t0 := time.Now()
			if err := e.do(ctx, c); err != nil {
				b.Fatal(err)
			}
			if latency {
				all = append(all, time.Since(t0))
			}
		}
	} else {
		b.SetParallelism(max(1, callers/max(1, runtime.GOMAXPROCS(0))))
		b.RunParallel(func(pb *testing.PB) {
			var mine []time.Duration
			for pb.Next() {
				t0 := time.Now()
				if err := e.do(ctx, c); err != nil {
					b.Error(err)
					return
				}
				if latency {
					mine = append(mine, time.Since(t0))
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	b.StopTimer()
	reportCPU(b, cpu)
	if latency && len(all) > 0 {
		slices.Sort(all)
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(all[min(len(all)-1, len(all)*99/100)].Microseconds()), "p99-µs")
	}
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU time per call since start: the
// client, the gateway and the server together (they share the process),
// on all cores, whatever the wall-clock time was.
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(processCPU()-start)/float64(b.N)/1e3, "cpu-µs/op")
	}
}
