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
