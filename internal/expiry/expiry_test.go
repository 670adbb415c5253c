package expiry

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestQueueOrder: entries come out soonest first, whatever the order
// they went in, ties included.
func TestQueueOrder(t *testing.T) {
	var q Queue
	if _, ok := q.Peek(); ok {
		t.Fatal("Peek of an empty queue")
	}
	base := time.Unix(1000, 0)
	for _, i := range rand.Perm(100) {
		q.Push(string(rune('a'+i%26)), base.Add(time.Duration(i/2)*time.Second))
	}
	if q.Len() != 100 {
		t.Fatalf("Len %d", q.Len())
	}
	last := time.Time{}
	for q.Len() > 0 {
		p, _ := q.Peek()
		e := q.Pop()
		if e != p || e.At.Before(last) {
			t.Fatalf("popped %v after %v (peeked %v)", e, last, p)
		}
		last = e.At
	}
}
