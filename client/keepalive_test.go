package client

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/internal/keepalive/keepalivetest"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// rawServer is the server end of a memory pair, written by hand.
type rawServer struct {
	t    *testing.T
	conn *memory.Conn
}

func (r rawServer) read() map[string]any {
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

func (r rawServer) answer(req map[string]any, result string) {
	r.t.Helper()
	id, _ := json.Marshal(req["id"])
	msg := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
	if err := r.conn.Write(context.Background(), transport.Message{Data: []byte(msg)}); err != nil {
		r.t.Fatal(err)
	}
}

// TestKeepAlive: a legacy connection pings at each tick and closes when
// a ping goes unanswered; a modern one never pings.
func TestKeepAlive(t *testing.T) {
	t.Run("legacy", func(t *testing.T) {
		clock := keepalivetest.NewManual()
		a, b := memory.NewPair()
		srv := rawServer{t, b}
		done := make(chan *Client, 1)
		go func() {
			c, err := Connect(context.Background(), a, &Options{ProtocolVersion: mcp.LatestLegacy, KeepAlive: time.Minute, tick: clock.Tick})
			if err != nil {
				t.Error(err)
			}
			done <- c
		}()
		init := srv.read()
		srv.answer(init, `{"protocolVersion":"`+mcp.LatestLegacy+`","capabilities":{},"serverInfo":{"name":"raw","version":"1"}}`)
		srv.read() // notifications/initialized
		c := <-done
		if c == nil {
			t.FailNow()
		}
		defer c.Close()
		interval := clock.Next(t)
		interval <- time.Now()
		ping := srv.read()
		if ping["method"] != mcp.MethodPing {
			t.Fatalf("got %v, want ping", ping)
		}
		clock.Next(t) // its timeout, never fired
		srv.answer(ping, `{}`)
		interval <- time.Now()
		if ping = srv.read(); ping["method"] != mcp.MethodPing {
			t.Fatalf("got %v, want a second ping", ping)
		}
		clock.Next(t) <- time.Now()
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the connection did not end after the unanswered ping")
		}
		if err := c.Wait(); !errors.Is(err, ErrKeepAlive) {
			t.Errorf("Wait = %v, want ErrKeepAlive", err)
		}
	})
	t.Run("modern", func(t *testing.T) {
		clock := keepalivetest.NewManual()
		a, _ := memory.NewPair()
		c, err := Connect(context.Background(), a, &Options{ProtocolVersion: mcp.Version20260728, KeepAlive: time.Minute, tick: clock.Tick})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if clock.Made() != 0 {
			t.Fatal("a modern connection started a keepalive ticker")
		}
	})
}
