package bench_test

// Client benchmarks (W1c, W3c, W7c, W8c): each client against
// servers.ClientServer in memory (clients.InMemory), so allocations per
// call are exact and CPU per call compares without loopback noise:
//
//	go test -run '^$' -bench Client -benchmem -count 5

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/bench/clients"
	"github.com/mcpkit/mcpkit/bench/servers"
)

func BenchmarkClient(b *testing.B) {
	hc := clients.Tuned(0, clients.InMemory(servers.ClientServer()))
	for _, w := range clients.Workloads {
		for _, sdk := range clients.SDKs {
			if !clients.Supported(sdk, w) {
				continue
			}
			b.Run(w+"/"+sdk, func(b *testing.B) {
				ctx := context.Background()
				c, err := clients.New(ctx, sdk, w, "http://bench.test", hc)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				if err := c.Call(ctx); err != nil { // warm whatever is built lazily
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := c.Call(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
