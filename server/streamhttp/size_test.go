package streamhttp

import (
	"testing"
	"unsafe"
)

// TestIdleSessionSize holds the size of the HTTP side of a session, which
// every idle legacy session carries (bench W9, BenchmarkIdleSessionHeap):
// the allocator rounds it up to its size class, so a field more can cost
// 16 bytes a session. 208 is its class; growing past it is a decision to
// write down, not an accident.
func TestIdleSessionSize(t *testing.T) {
	if n := unsafe.Sizeof(httpSession{}); n > 208 {
		t.Fatalf("httpSession is %d bytes, over the 208-byte size class it kept", n)
	}
}
