//go:build !race

// The race detector's instrumentation allocates on its own, so this is
// checked without -race: scripts/test runs it in its allocation pass.

package jsonrpc

import "testing"

// TestMethodNoAllocs: an MCP method name is interned, so decoding a
// message with one costs one allocation fewer than with another name.
func TestMethodNoAllocs(t *testing.T) {
	known := testing.AllocsPerRun(100, func() {
		_, _ = decodeOwnedMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`), Limits{})
	})
	other := testing.AllocsPerRun(100, func() {
		_, _ = decodeOwnedMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"vendor/call"}`), Limits{})
	})
	if known >= other {
		t.Errorf("an MCP method costs %v allocations, another %v: want one fewer", known, other)
	}
}
