package streamhttp

import (
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/store"
)

// TestClusterChangesCoalesce: while a change from another instance is
// being delivered, the same changes announced again wait once each, in
// the order first announced; one announced again after its delivery
// began waits again. However fast the others announce, the queue holds
// each distinct change at most once.
func TestClusterChangesCoalesce(t *testing.T) {
	bus := store.NewMemoryBus()
	br := bus.Broker()
	defer br.Close()
	h := NewHandler(server.New(nil), &Options{SessionStore: store.NewMemorySessionStore(), Broker: br, KeepAlive: -1})
	defer h.Close()
	c := h.cluster

	type change struct{ method, uri string }
	got := make(chan change, 64)
	release := make(chan struct{})
	c.mu.Lock()
	c.deliver = func(method, uri string) {
		got <- change{method, uri}
		if uri == "file:///held" {
			<-release
		}
	}
	c.mu.Unlock()
	announce := func(method, uri string) {
		t.Helper()
		raw, err := json.Marshal(&clusterMsg{Kind: kindChange, From: "another", Method: method, URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		c.receive(raw)
	}
	next := func() change {
		t.Helper()
		select {
		case g := <-got:
			return g
		case <-time.After(10 * time.Second):
			t.Fatal("no delivery within 10s")
			return change{}
		}
	}
	upd := mcp.NotificationResourcesUpdated
	list := mcp.NotificationToolsListChanged

	announce(upd, "file:///held")
	if first := next(); first.uri != "file:///held" { // its delivery holds
		t.Fatalf("first delivery %v", first)
	}
	for range 3 {
		announce(upd, "file:///held") // its delivery began: waits again, once
		announce(upd, "file:///a")
		announce(list, "")
	}
	c.mu.Lock()
	waiting := len(c.changes)
	c.mu.Unlock()
	if waiting != 3 {
		t.Errorf("%d changes waiting, want 3 (held again, a, the list)", waiting)
	}
	close(release)
	announce(upd, "file:///last") // after the others: shows nothing else came between
	want := []change{{upd, "file:///held"}, {upd, "file:///a"}, {list, ""}, {upd, "file:///last"}}
	for i, w := range want {
		if g := next(); g != w {
			t.Fatalf("delivery %d: %v, want %v", i+1, g, w)
		}
	}
}
