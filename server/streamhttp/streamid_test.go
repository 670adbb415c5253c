package streamhttp

import (
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/server"
)

// TestStreamIDs: stream ids never repeat within a handler nor across two
// handlers (a restart with a store that kept the old events), and leave
// the event id's separator alone.
func TestStreamIDs(t *testing.T) {
	a, b := NewHandler(server.New(nil), nil), NewHandler(server.New(nil), nil)
	defer a.Close()
	defer b.Close()
	seen := map[string]bool{}
	for range 1000 {
		for _, h := range []*Handler{a, b} {
			id := h.newStreamID(true)
			if seen[id] || strings.Contains(id, "_") {
				t.Fatalf("stream id %q repeats or holds the event id's separator", id)
			}
			seen[id] = true
		}
	}
}

// TestPermutation: the stream ids' permutation is a bijection (distinct
// counters, distinct ids) that does not keep the counter's order.
func TestPermutation(t *testing.T) {
	p := newPermutation()
	seen := map[uint64]bool{}
	inOrder := 0
	prev := p.permute(0)
	for i := uint64(1); i <= 100000; i++ {
		v := p.permute(i)
		if seen[v] {
			t.Fatalf("permute(%d) repeats an earlier value", i)
		}
		seen[v] = true
		if v > prev {
			inOrder++
		}
		prev = v
	}
	if inOrder > 60000 || inOrder < 40000 {
		t.Errorf("%d of 100000 successive ids increase: the counter shows through", inOrder)
	}
}
