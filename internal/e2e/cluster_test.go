package e2e

import (
	"testing"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/internal/clustertest"
)

// TestCluster runs three instances in this process, sharing in-memory
// stores and a MemoryBus, behind a round-robin proxy (the store/redis
// module runs the same scenarios on Redis).
func TestCluster(t *testing.T) {
	clustertest.Run(t, func(t *testing.T) *clustertest.Cluster {
		sessions := store.NewMemorySessionStore()
		events := store.NewMemoryEventStore(nil)
		bus := store.NewMemoryBus()
		return clustertest.New(t, 3, func(int) clustertest.Backend {
			b := bus.Broker()
			return clustertest.Backend{Sessions: sessions, Events: events, Broker: b, Close: func() { _ = b.Close() }}
		})
	})
}

// TestClusterTasks runs the task scenarios on three in-process
// instances sharing a MemoryTaskStore and a MemoryBus.
func TestClusterTasks(t *testing.T) {
	clustertest.RunTasks(t, func(t *testing.T) *clustertest.Cluster {
		sessions, events, tasks := store.NewMemorySessionStore(), store.NewMemoryEventStore(nil), store.NewMemoryTaskStore(nil)
		bus := store.NewMemoryBus()
		return clustertest.New(t, 3, func(int) clustertest.Backend {
			b := bus.Broker()
			return clustertest.Backend{Sessions: sessions, Events: events, Tasks: tasks, Broker: b, Close: func() { _ = b.Close() }}
		})
	})
}
