package client_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// rootsNamed answers roots/list with one root named name.
func rootsNamed(name string) client.ListRootsHandler {
	return func(context.Context) (*mcp.ListRootsResult, error) {
		return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///" + name, Name: name}}}, nil
	}
}

// askRoots sends roots/list from the fake server while the client waits
// for nothing, and returns the first root's name or the error.
func askRoots(t *testing.T, f *fakeServer) (string, error) {
	t.Helper()
	var res mcp.ListRootsResult
	if err := f.conn.Call(testCtx(t), mcp.MethodRootsList, nil, &res); err != nil {
		return "", err
	}
	if len(res.Roots) != 1 {
		t.Fatalf("roots/list answered %+v", res)
	}
	return res.Roots[0].Name, nil
}

// TestUnsolicitedLegacy: a legacy server's request that belongs to no
// request of the client (the reference filesystem server asks roots/list
// right after initialization) goes to the handler; with
// StrictServerRequests it is refused -32602 (SEP-2260), and so it is on
// a modern connection.
func TestUnsolicitedLegacy(t *testing.T) {
	t.Run("legacy", func(t *testing.T) {
		tr, f := startFake(t, legacyServer(nil))
		connect(t, tr, &client.Options{ProtocolVersion: mcp.LatestLegacy, ListRootsHandler: rootsNamed("a")})
		if name, err := askRoots(t, f); err != nil || name != "a" {
			t.Errorf("unsolicited roots/list: %q, %v; want the handler's answer", name, err)
		}
	})
	t.Run("strict", func(t *testing.T) {
		tr, f := startFake(t, legacyServer(nil))
		connect(t, tr, &client.Options{ProtocolVersion: mcp.LatestLegacy, ListRootsHandler: rootsNamed("a"), StrictServerRequests: true})
		_, err := askRoots(t, f)
		if e, ok := jsonrpc.AsError(err); !ok || e.Code != mcp.CodeInvalidParams {
			t.Errorf("strict: unsolicited roots/list answered %v, want -32602", err)
		}
	})
	t.Run("modern", func(t *testing.T) {
		tr, f := startFake(t, modernServer)
		c := connect(t, tr, &client.Options{ListRootsHandler: rootsNamed("a")})
		if c.Era() != client.EraModern {
			t.Fatalf("era %v", c.Era())
		}
		_, err := askRoots(t, f)
		if e, ok := jsonrpc.AsError(err); !ok || e.Code != mcp.CodeInvalidParams {
			t.Errorf("modern: unsolicited roots/list answered %v, want -32602", err)
		}
	})
}

// listenConn is a transport with a listening stream that counts Listen.
type listenConn struct {
	transport.Conn
	listens atomic.Int32
}

func (l *listenConn) Listen() { l.listens.Add(1) }

// TestSetHandlersLegacy: handlers set after Connect answer the next
// request and replace earlier ones; nil removes one (-32601); the first
// one set starts the listening stream, which Connect did not start
// without handlers.
func TestSetHandlersLegacy(t *testing.T) {
	tr, f := startFake(t, legacyServer(nil))
	lc := &listenConn{Conn: tr}
	c := connect(t, lc, &client.Options{ProtocolVersion: mcp.LatestLegacy})
	if n := lc.listens.Load(); n != 0 {
		t.Fatalf("Connect without handlers started the listener (%d)", n)
	}
	_, err := askRoots(t, f)
	if e, ok := jsonrpc.AsError(err); !ok || e.Code != mcp.CodeMethodNotFound {
		t.Errorf("no handler: roots/list answered %v, want -32601", err)
	}
	c.SetListRootsHandler(rootsNamed("first"))
	if n := lc.listens.Load(); n != 1 {
		t.Errorf("setting the first handler called Listen %d times, want 1", n)
	}
	if name, err := askRoots(t, f); err != nil || name != "first" {
		t.Errorf("after SetListRootsHandler: %q, %v", name, err)
	}
	c.SetListRootsHandler(rootsNamed("second"))
	if name, err := askRoots(t, f); err != nil || name != "second" {
		t.Errorf("after replacing: %q, %v", name, err)
	}
	c.SetListRootsHandler(nil)
	_, err = askRoots(t, f)
	if e, ok := jsonrpc.AsError(err); !ok || e.Code != mcp.CodeMethodNotFound {
		t.Errorf("removed handler: roots/list answered %v, want -32601", err)
	}
	// The capabilities of initialize do not change.
	if got := f.requests()[0]; got.Method != mcp.MethodInitialize {
		t.Fatalf("first request %s", got.Method)
	}
}

// TestSetHandlersModern: on a modern connection the capabilities every
// request declares follow the handlers set after Connect.
func TestSetHandlersModern(t *testing.T) {
	tr, f := startFake(t, modernServer)
	c := connect(t, tr, &client.Options{Observe: modernWire(t)})
	ctx := testCtx(t)
	declared := func() *mcp.ClientCapabilities {
		t.Helper()
		if _, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "t"}); err != nil {
			t.Fatal(err)
		}
		reqs := f.requests()
		caps, err := envelopeOf(t, reqs[len(reqs)-1]).ClientCapabilities()
		if err != nil {
			t.Fatal(err)
		}
		return caps
	}
	if caps := declared(); caps.Elicitation != nil || caps.Sampling != nil {
		t.Errorf("declared %+v before any handler", caps)
	}
	c.SetElicitHandler(func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) { return nil, nil })
	c.SetCreateMessageHandler(func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) { return nil, nil })
	if caps := declared(); caps.Elicitation == nil || caps.Sampling == nil {
		t.Errorf("declared %+v after setting elicitation and sampling", caps)
	}
	c.SetElicitHandler(nil)
	if caps := declared(); caps.Elicitation != nil || caps.Sampling == nil {
		t.Errorf("declared %+v after removing elicitation", caps)
	}
}
