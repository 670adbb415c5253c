package expiry

import (
	"container/heap"
	"time"
)

// Entry is a key and its deadline.
type Entry struct {
	Key string
	At  time.Time
}

// Queue holds entries by deadline. The zero value is an empty queue.
// An entry is never removed before it comes due: an owner that deleted
// or renewed its key meanwhile checks, when it pops the entry, whether
// the key still expires then.
type Queue struct{ h entries }

// Push adds key with deadline at.
func (q *Queue) Push(key string, at time.Time) { heap.Push(&q.h, Entry{Key: key, At: at}) }

// Peek returns the entry with the soonest deadline; ok is false when the
// queue is empty.
func (q *Queue) Peek() (e Entry, ok bool) {
	if len(q.h) == 0 {
		return Entry{}, false
	}
	return q.h[0], true
}

// Pop removes and returns the entry with the soonest deadline; the queue
// must not be empty.
func (q *Queue) Pop() Entry { return heap.Pop(&q.h).(Entry) }

// Len returns the number of entries.
func (q *Queue) Len() int { return len(q.h) }

// entries is a min-heap of entries (container/heap).
type entries []Entry

func (h entries) Len() int           { return len(h) }
func (h entries) Less(i, j int) bool { return h[i].At.Before(h[j].At) }
func (h entries) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *entries) Push(x any)        { *h = append(*h, x.(Entry)) }
func (h *entries) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
