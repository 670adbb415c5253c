package redisstore

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/internal/clustertest"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// TestCluster: three instances sharing Redis (sessions, events, pub/sub)
// behind a round-robin proxy: a legacy session's elicitation answered on
// another instance, a stream resumed on another instance, DELETE, a
// modern MRTR retry on another instance, listen fan-out, GET-stream
// notifications from another instance, and an instance killed mid-call.
func TestCluster(t *testing.T) {
	redistest.Need(t)
	clustertest.Run(t, func(t *testing.T) *clustertest.Cluster {
		p := prefix(t)
		sessions := NewSessionStore(rdb, &SessionStoreOptions{Prefix: p})
		events := NewEventStore(rdb, &EventStoreOptions{Prefix: p})
		return clustertest.New(t, 3, func(int) clustertest.Backend {
			b, err := NewBroker(context.Background(), rdb, &BrokerOptions{Prefix: p})
			if err != nil {
				t.Fatal(err)
			}
			return clustertest.Backend{Sessions: sessions, Events: events, Broker: b, Close: func() { _ = b.Close() }}
		})
	})
}

// TestClusterTasks: the task scenarios on three instances sharing Redis
// (the TaskStore included).
func TestClusterTasks(t *testing.T) {
	redistest.Need(t)
	clustertest.RunTasks(t, func(t *testing.T) *clustertest.Cluster {
		p := prefix(t)
		sessions := NewSessionStore(rdb, &SessionStoreOptions{Prefix: p})
		events := NewEventStore(rdb, &EventStoreOptions{Prefix: p})
		tasks := NewTaskStore(rdb, &TaskStoreOptions{Prefix: p})
		return clustertest.New(t, 3, func(int) clustertest.Backend {
			b, err := NewBroker(context.Background(), rdb, &BrokerOptions{Prefix: p})
			if err != nil {
				t.Fatal(err)
			}
			return clustertest.Backend{Sessions: sessions, Events: events, Tasks: tasks, Broker: b, Close: func() { _ = b.Close() }}
		})
	})
}

// TestGatewayCluster: two gateway instances sharing Redis (the HTTP
// handler's sessions, events and broker, and the gateway's own broker).
func TestGatewayCluster(t *testing.T) {
	redistest.Need(t)
	p := prefix(t)
	sessions := NewSessionStore(rdb, &SessionStoreOptions{Prefix: p})
	events := NewEventStore(rdb, &EventStoreOptions{Prefix: p})
	clustertest.Gateway(t, func(int) clustertest.GatewayBackend {
		hb, err := NewBroker(context.Background(), rdb, &BrokerOptions{Prefix: p})
		if err != nil {
			t.Fatal(err)
		}
		gb, err := NewBroker(context.Background(), rdb, &BrokerOptions{Prefix: p + "gw:"})
		if err != nil {
			t.Fatal(err)
		}
		return clustertest.GatewayBackend{
			Backend:       clustertest.Backend{Sessions: sessions, Events: events, Broker: hb, Close: func() { _ = hb.Close(); _ = gb.Close() }},
			GatewayBroker: gb,
		}
	})
}
