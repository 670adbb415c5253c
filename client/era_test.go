package client_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// TestDetectModern: a server that answers server/discover is modern; the
// client takes its newest common revision, its capabilities, identity and
// instructions, and sends no initialize.
func TestDetectModern(t *testing.T) {
	tr, f := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		switch msg.Method {
		case mcp.MethodServerDiscover:
			return discoverResult("2027-01-01", mcp.Version20260728, mcp.LatestLegacy), nil
		case mcp.MethodToolsList:
			return toolsResult(ttl(0), mcp.CachePrivate), nil
		}
		return nil, jsonrpc.ErrMethodNotFound
	})
	c := connect(t, tr, &client.Options{Observe: modernWire(t)})
	if c.Era() != client.EraModern || c.ProtocolVersion() != mcp.Version20260728 {
		t.Fatalf("era %v version %q, want modern 2026-07-28", c.Era(), c.ProtocolVersion())
	}
	if c.ServerInfo().Name != serverInfo.Name || c.ServerCapabilities().Tools == nil || c.Instructions() != "be nice" {
		t.Errorf("server info %+v caps %+v instructions %q", c.ServerInfo(), c.ServerCapabilities(), c.Instructions())
	}
	if _, err := c.ListTools(testCtx(t), nil); err != nil {
		t.Fatal(err)
	}
	if got := f.methods(); !slices.Equal(got, []string{mcp.MethodServerDiscover, mcp.MethodToolsList}) {
		t.Errorf("requests %v, want server/discover then tools/list", got)
	}
	if v := envelopeOf(t, f.requests()[0]).ProtocolVersion(); v != mcp.Version20260728 {
		t.Errorf("the probe claims %q, want the newest modern revision", v)
	}
}

// legacyServer answers initialize and tools/list like a legacy server,
// and server/discover with discover.
func legacyServer(discover func(ctx context.Context, msg *jsonrpc.Message) (any, error)) func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	return func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		switch msg.Method {
		case mcp.MethodServerDiscover:
			return discover(ctx, msg)
		case mcp.MethodInitialize:
			return initializeResult(), nil
		case mcp.MethodToolsList:
			return jsontext.Value(`{"tools":[]}`), nil
		}
		return nil, jsonrpc.ErrMethodNotFound
	}
}

// TestDetectFallback: anything but a modern answer to the probe makes the
// client fall back to initialize on the same connection — whatever the
// error code, no answer at all, or a result without a modern revision.
func TestDetectFallback(t *testing.T) {
	for _, tc := range []struct {
		name     string
		discover func(ctx context.Context, msg *jsonrpc.Message) (any, error)
	}{
		{"method not found", func(context.Context, *jsonrpc.Message) (any, error) { return nil, jsonrpc.ErrMethodNotFound }},
		{"invalid params", func(context.Context, *jsonrpc.Message) (any, error) {
			return nil, jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: not initialized")
		}},
		{"invalid request", func(context.Context, *jsonrpc.Message) (any, error) {
			return nil, jsonrpc.NewError(mcp.CodeInvalidRequest, "Invalid Request: initialize first")
		}},
		{"implementation error", func(context.Context, *jsonrpc.Message) (any, error) {
			return nil, jsonrpc.NewError(-32000, "Server not initialized")
		}},
		{"-32022 naming legacy revisions only", func(context.Context, *jsonrpc.Message) (any, error) {
			return nil, unsupported(mcp.Version20260728, mcp.LatestLegacy)
		}},
		{"-32022 without data", func(context.Context, *jsonrpc.Message) (any, error) {
			return nil, jsonrpc.NewError(mcp.CodeUnsupportedProtocolVersion, "Unsupported protocol version")
		}},
		{"no modern revision", func(context.Context, *jsonrpc.Message) (any, error) {
			return discoverResult(mcp.LatestLegacy), nil
		}},
		{"garbage result", func(context.Context, *jsonrpc.Message) (any, error) { return jsontext.Value(`[1,2]`), nil }},
		{"no answer", func(ctx context.Context, _ *jsonrpc.Message) (any, error) {
			<-ctx.Done() // the client's notifications/cancelled, or the end
			return nil, ctx.Err()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, f := startFake(t, legacyServer(tc.discover))
			c := connect(t, tr, &client.Options{DiscoverTimeout: 200 * time.Millisecond})
			if c.Era() != client.EraLegacy || c.ProtocolVersion() != mcp.LatestLegacy {
				t.Fatalf("era %v version %q, want legacy %s", c.Era(), c.ProtocolVersion(), mcp.LatestLegacy)
			}
			if _, err := c.ListTools(testCtx(t), nil); err != nil {
				t.Fatal(err)
			}
			want := []string{mcp.MethodServerDiscover, mcp.MethodInitialize, mcp.MethodToolsList}
			if got := f.methods(); !slices.Equal(got, want) {
				t.Errorf("requests %v, want %v", got, want)
			}
			if c.ServerInfo().Name != "legacy" {
				t.Errorf("server info %+v", c.ServerInfo())
			}
			// The legacy requests carry no modern envelope.
			if v := envelopeOf(t, f.requests()[2]).ProtocolVersion(); v != "" {
				t.Errorf("a legacy tools/list claims %q", v)
			}
		})
	}
}

// TestDetectTimeoutCancels: a probe left unanswered is cancelled before
// initialize.
func TestDetectTimeoutCancels(t *testing.T) {
	ended := make(chan error, 1)
	tr, _ := startFake(t, legacyServer(func(ctx context.Context, _ *jsonrpc.Message) (any, error) {
		<-ctx.Done()
		ended <- context.Cause(ctx)
		return nil, ctx.Err()
	}))
	start := time.Now()
	c := connect(t, tr, &client.Options{DiscoverTimeout: 100 * time.Millisecond})
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("fell back after %v, before the timeout", d)
	}
	// The probe's handler ends while the connection is up: the client
	// cancelled it (notifications/cancelled).
	cause := recv(t, ended, "the probe to be cancelled")
	select {
	case <-c.Done():
		t.Fatal("the connection ended")
	default:
	}
	t.Logf("probe cancelled: %v", cause)
}

// TestDetectConnectionClosed: a server that exits on the probe cannot be
// initialized on the same connection: Connect says so.
func TestDetectConnectionClosed(t *testing.T) {
	exit := make(chan struct{})
	tr, f := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		close(exit) // exits instead of answering
		<-ctx.Done()
		return nil, ctx.Err()
	})
	go func() {
		<-exit
		f.conn.Close()
	}()
	c, err := client.Connect(testCtx(t), tr, nil)
	if !errors.Is(err, client.ErrProbeClosed) {
		t.Fatalf("Connect = %v, %v; want ErrProbeClosed", c, err)
	}
}

// TestDetect32022: a modern server that does not serve our preferred
// revision answers -32022; the client takes one it names, asks again and
// stays modern (it never falls back to initialize).
func TestDetect32022(t *testing.T) {
	// This client speaks only 2026-07-28, so the server rejects the first
	// probe for another reason of its own and names 2026-07-28.
	calls := 0
	tr, f := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		if msg.Method == mcp.MethodServerDiscover {
			calls++
			if calls == 1 {
				return nil, unsupported(mcp.Version20260728, "2027-01-01", mcp.Version20260728)
			}
			return discoverResult(mcp.Version20260728), nil
		}
		return nil, jsonrpc.ErrMethodNotFound
	})
	c := connect(t, tr, &client.Options{Observe: modernWire(t)})
	if c.Era() != client.EraModern || c.ProtocolVersion() != mcp.Version20260728 {
		t.Fatalf("era %v version %q", c.Era(), c.ProtocolVersion())
	}
	if got := f.methods(); !slices.Equal(got, []string{mcp.MethodServerDiscover, mcp.MethodServerDiscover}) {
		t.Errorf("requests %v", got)
	}
	if c.ServerCapabilities().Tools == nil {
		t.Error("capabilities of the second discover were not kept")
	}
}

// TestDetectModernErrors: -32020 and -32021 come only from modern
// servers: the client stays modern.
func TestDetectModernErrors(t *testing.T) {
	for _, code := range []int64{mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability} {
		tr, f := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
			return nil, jsonrpc.NewError(code, "modern refusal")
		})
		c := connect(t, tr, nil)
		if c.Era() != client.EraModern {
			t.Errorf("code %d: era %v, want modern", code, c.Era())
		}
		if got := f.methods(); !slices.Equal(got, []string{mcp.MethodServerDiscover}) {
			t.Errorf("code %d: requests %v", code, got)
		}
	}
}

// TestPinnedEras: a legacy revision initializes at once; a modern one
// sends nothing until the first request; a modern revision the client does
// not speak is refused.
func TestPinnedEras(t *testing.T) {
	t.Run("legacy", func(t *testing.T) {
		tr, f := startFake(t, legacyServer(func(context.Context, *jsonrpc.Message) (any, error) {
			t.Error("probed despite a pinned legacy revision")
			return nil, jsonrpc.ErrMethodNotFound
		}))
		c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20250618})
		if c.Era() != client.EraLegacy {
			t.Fatalf("era %v", c.Era())
		}
		if got := f.methods(); !slices.Equal(got, []string{mcp.MethodInitialize}) {
			t.Errorf("requests %v", got)
		}
	})
	t.Run("modern", func(t *testing.T) {
		tr, f := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
			return toolsResult(ttl(0), mcp.CachePrivate), nil
		})
		c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728, Observe: modernWire(t)})
		if c.Era() != client.EraModern || c.ProtocolVersion() != mcp.Version20260728 {
			t.Fatalf("era %v version %q", c.Era(), c.ProtocolVersion())
		}
		if n := len(f.requests()); n != 0 {
			t.Errorf("%d requests before the first call", n)
		}
		if _, err := c.ListTools(testCtx(t), nil); err != nil {
			t.Fatal(err)
		}
		if got := f.methods(); !slices.Equal(got, []string{mcp.MethodToolsList}) {
			t.Errorf("requests %v", got)
		}
	})
	t.Run("unknown modern", func(t *testing.T) {
		tr, _ := startFake(t, func(context.Context, *jsonrpc.Message) (any, error) { return nil, jsonrpc.ErrMethodNotFound })
		defer tr.Close()
		if _, err := client.Connect(testCtx(t), tr, &client.Options{ProtocolVersion: "2099-01-01"}); !errors.Is(err, client.ErrUnsupportedVersion) {
			t.Fatalf("Connect = %v, want ErrUnsupportedVersion", err)
		}
	})
}
