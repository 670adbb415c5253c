package streamhttp

import (
	"runtime"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

// TestSessionHandlersWarmGoroutines: the handlers of legacy sessions run
// on the handler's pool of warm goroutines (a fresh goroutine would grow
// its stack again on every request: internal/workers tests the reuse);
// Shutdown ends the idle ones.
func TestSessionHandlersWarmGoroutines(t *testing.T) {
	e := newHTTPEnv(t, echoServer(), nil)
	sid := e.Initialize("{}")
	m := e.ReadJSON(e.Post(sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`))
	if m.Error != nil {
		t.Fatalf("tools/call: %s", m.Raw)
	}
	// The handler's goroutine goes back to the pool once it has written
	// the answer; without the pool it would end. (The bound reports a
	// hang; nothing races against it.)
	for deadline := time.Now().Add(httpenv.HangGuard); e.h.workers.Idle() == 0; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatal("no goroutine went back to the pool")
		}
	}
	if err := e.h.Close(); err != nil {
		t.Fatal(err)
	}
	if n := e.h.workers.Idle(); n != 0 {
		t.Fatalf("%d idle goroutines after Close", n)
	}
}
