package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/keepalive/keepalivetest"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// manualTicks is the keepalive clock the tests move.
type manualTicks = keepalivetest.Manual

// rawKeepAliveClient is the client end of a memory pair, written by hand.
type rawKeepAliveClient struct {
	t    *testing.T
	conn *memory.Conn
}

func (r rawKeepAliveClient) send(msg string) {
	r.t.Helper()
	if err := r.conn.Write(context.Background(), transport.Message{Data: []byte(msg)}); err != nil {
		r.t.Fatal(err)
	}
}

func (r rawKeepAliveClient) read() map[string]any {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := r.conn.Read(ctx)
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		r.t.Fatal(err)
	}
	return m
}

func keepAliveServer(clock *manualTicks) *Server {
	return New(&Options{KeepAlive: time.Minute, tick: clock.Tick})
}

// TestKeepAliveLegacy: a legacy session is pinged at each tick; an
// answered ping keeps it, an unanswered one ends it at the timeout.
func TestKeepAliveLegacy(t *testing.T) {
	clock := keepalivetest.NewManual()
	s := keepAliveServer(clock)
	a, b := memory.NewPair()
	ss := s.Connect(b)
	defer ss.Close()
	peer := rawKeepAliveClient{t, a}
	interval := clock.Next(t)
	peer.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + mcp.LatestLegacy + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	peer.read()
	peer.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	waitFor(t, "initialized", ss.ready)

	interval <- time.Now()
	ping := peer.read()
	if ping["method"] != mcp.MethodPing {
		t.Fatalf("got %v, want a ping", ping)
	}
	clock.Next(t) // the ping's timeout, never fired
	id, _ := json.Marshal(ping["id"])
	peer.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{}}`)

	interval <- time.Now()
	if ping = peer.read(); ping["method"] != mcp.MethodPing {
		t.Fatalf("got %v, want a second ping", ping)
	}
	select {
	case <-ss.conn.Done():
		t.Fatal("the session ended while its ping was pending")
	default:
	}
	clock.Next(t) <- time.Now() // no answer: the timeout fires
	select {
	case <-ss.conn.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after the unanswered ping")
	}
}

// TestKeepAliveModern: a connection that only carries 2026-07-28
// requests is never pinged (that revision has no ping).
func TestKeepAliveModern(t *testing.T) {
	clock := keepalivetest.NewManual()
	s := keepAliveServer(clock)
	a, b := memory.NewPair()
	ss := s.Connect(b)
	defer ss.Close()
	peer := rawKeepAliveClient{t, a}
	interval := clock.Next(t)
	discover := `{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	peer.send(strings.Replace(discover, "%d", "1", 1))
	if r := peer.read(); r["result"] == nil {
		t.Fatalf("discover = %v", r)
	}
	interval <- time.Now()
	// The tick has been taken once the next one fits in the buffer.
	interval <- time.Now()
	peer.send(strings.Replace(discover, "%d", "2", 1))
	if r := peer.read(); r["method"] != nil || r["id"] != float64(2) {
		t.Fatalf("got %v, want the discover answer and no ping", r)
	}
	select {
	case <-ss.conn.Done():
		t.Fatal("the modern connection ended")
	default:
	}
}
