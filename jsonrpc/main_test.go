package jsonrpc

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any goroutine outlives the tests; the Conn
// tests also check after each test with goleak.VerifyNone.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
