package e2e

import (
	"testing"

	"github.com/mcpkit/mcpkit/internal/clustertest"
	"github.com/mcpkit/mcpkit/store"
)

// TestGatewayCluster runs two gateway instances in this process, sharing
// in-memory stores and MemoryBus brokers (the store/redis module runs the
// same scenario on Redis).
func TestGatewayCluster(t *testing.T) {
	sessions, events := store.NewMemorySessionStore(), store.NewMemoryEventStore(nil)
	bus := store.NewMemoryBus()
	clustertest.Gateway(t, func(int) clustertest.GatewayBackend {
		hb, gb := bus.Broker(), bus.Broker()
		return clustertest.GatewayBackend{
			Backend:       clustertest.Backend{Sessions: sessions, Events: events, Broker: hb, Close: func() { _ = hb.Close(); _ = gb.Close() }},
			GatewayBroker: gb,
		}
	})
}
