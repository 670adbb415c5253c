package group_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives the tests: every
// attempt, subscription drain and server session ends with its group or
// its test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
