package store

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine outlives the tests (the
// MemoryBus runs one per broker).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
