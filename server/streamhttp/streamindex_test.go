package streamhttp

import (
	"slices"
	"strings"
	"testing"
)

// TestStreamIndex: entries put are found until deleted, whether inline
// or in the overflow map; a key put twice is replaced, not duplicated;
// the overflow map is dropped once empty, and an emptied index holds
// nothing.
func TestStreamIndex(t *testing.T) {
	var x streamIndex[string]
	a, b, c, d := &stream{id: "a"}, &stream{id: "b"}, &stream{id: "c"}, &stream{id: "d"}
	if x.get("a") != nil || x.len() != 0 || len(x.all()) != 0 {
		t.Fatal("the zero index is not empty")
	}
	x.put("a", a)
	x.put("b", b)
	x.put("c", c)
	x.put("b", d) // replaced in the overflow map
	if x.len() != 3 || x.get("a") != a || x.get("b") != d || x.get("c") != c {
		t.Fatalf("after puts: len %d, a %p b %p c %p", x.len(), x.get("a"), x.get("b"), x.get("c"))
	}
	x.del("a") // the inline entry: the slot is free again
	x.put("a", b)
	x.put("a", a) // replaced inline
	if x.len() != 3 || x.get("a") != a {
		t.Fatalf("after re-put: len %d, a %p", x.len(), x.get("a"))
	}
	got := x.all()
	slices.SortFunc(got, func(p, q *stream) int { return strings.Compare(p.id, q.id) })
	if len(got) != 3 || got[0] != a || got[1] != c || got[2] != d {
		t.Fatalf("all: %v", got)
	}
	x.del("b")
	x.del("c")
	x.del("missing")
	if x.more != nil {
		t.Errorf("the overflow map outlived its entries: %v", x.more)
	}
	x.del("a")
	if x.len() != 0 || x.get("a") != nil || x.one != nil || x.key != "" {
		t.Errorf("an emptied index holds %+v", x)
	}
}
