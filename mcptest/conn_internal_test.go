package mcptest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

type errRecorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *errRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// TestObservedConn checks the wire check of a pair's connection against
// the official schema: a malformed request is reported, conforming
// messages and extension methods are not.
func TestObservedConn(t *testing.T) {
	checker := wirecheck.Need(t, "2025-11-25")
	r := &errRecorder{TB: t}
	a, b := memory.NewPair()
	defer a.Close()
	defer b.Close()
	conn := newObservedConn(a, checker, checker.Observe(r))
	ctx := t.Context()
	send := func(msg string) {
		go b.Read(ctx) //nolint:errcheck // the peer only drains
		if err := conn.Write(ctx, transport.Message{Data: []byte(msg)}); err != nil {
			t.Fatal(err)
		}
	}
	answer := func(msg string) {
		go b.Write(ctx, transport.Message{Data: []byte(msg)}) //nolint:errcheck // read below
		if _, err := conn.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	answer(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"example.com/x","params":{"any":1}}`)
	answer(`{"jsonrpc":"2.0","id":2,"result":{"whatever":true}}`)
	send(`{"jsonrpc":"2.0","method":"example.com/note"}`)
	if len(r.errs) != 0 {
		t.Fatalf("conforming and extension messages reported: %q", r.errs)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}`) // no name
	answer(`{"jsonrpc":"2.0","id":3,"result":{"content":"not an array"}}`)
	if len(r.errs) != 2 || !strings.Contains(r.errs[0], "client->server") || !strings.Contains(r.errs[1], "server->client") {
		t.Fatalf("reported %q; want the request and its result", r.errs)
	}
}
