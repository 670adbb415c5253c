package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Era is the protocol era of a connection: the one era type of mcpkit,
// shared with the interceptors' Call.Era (package intercept).
type Era = intercept.Era

const (
	// EraLegacy: the initialize handshake, revisions 2025-11-25 and
	// older.
	EraLegacy = intercept.EraLegacy
	// EraModern: no handshake, an envelope in every request, revisions
	// 2026-07-28 and later.
	EraModern = intercept.EraModern
)

// DefaultDiscoverTimeout is the default of Options.DiscoverTimeout: how
// long the automatic era selection waits for the answer to its
// server/discover probe before it falls back to initialize.
const DefaultDiscoverTimeout = 5 * time.Second

// modernVersions are the modern revisions this client speaks, newest
// first.
var modernVersions = []string{mcp.Version20260728}

// ModernVersions returns the modern revisions this client speaks, newest
// first: the ones it implements, a subset of the revisions mcp.IsModern
// accepts (which revision belongs to which era is mcp's to say; see
// docs/design/era.md).
func ModernVersions() []string { return slices.Clone(modernVersions) }

// ErrProbeClosed is returned by Connect when the connection ended while
// the client waited for the answer to its server/discover probe (some
// legacy stdio servers exit on a request they do not know). The server is
// gone, so the client cannot fall back to initialize on this connection:
// relaunch it and connect with Options.ProtocolVersion set to a legacy
// revision (mcp.LatestLegacy). The error wraps why the connection ended.
var ErrProbeClosed = errors.New("client: the connection ended during the server/discover probe; reconnect with a legacy Options.ProtocolVersion")

// pickVersion returns the newest modern revision this client speaks that
// offered lists.
func pickVersion(offered []string) (string, bool) {
	for _, v := range modernVersions {
		if slices.Contains(offered, v) {
			return v, true
		}
	}
	return "", false
}

// detect is the automatic era selection (spec "Backward Compatibility"
// of the stdio and Streamable HTTP transports): probe with server/discover
// before anything else, and fall back to initialize on anything that is
// not a modern answer. The fallback is never keyed to one error code.
func (c *Client) detect(ctx context.Context) error {
	version := modernVersions[0]
	pctx, cancel := context.WithTimeout(ctx, c.opts.DiscoverTimeout)
	res, err := c.discoverCall(pctx, version)
	cancel()
	if err == nil {
		if v, ok := pickVersion(res.SupportedVersions); ok {
			c.setModern(v, res)
			c.log.Debug("client: the server is modern", "version", v, "offered", res.SupportedVersions)
			return nil
		}
		c.log.Info("client: server/discover offered no modern revision this client speaks; falling back to initialize", "offered", res.SupportedVersions)
		return c.initialize(ctx, mcp.LatestLegacy)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("client: server/discover: %w", ctx.Err())
	}
	select {
	case <-c.conn.Done():
		return fmt.Errorf("%w: %w", ErrProbeClosed, c.conn.Err())
	default:
	}
	if errors.Is(err, jsonrpc.ErrClosed) {
		// The server ended its output: the probe failed at once, while
		// the connection finishes answering what the server had sent.
		return fmt.Errorf("%w: %w", ErrProbeClosed, err)
	}
	if e, ok := jsonrpc.AsError(err); ok {
		switch e.Code {
		case mcp.CodeUnsupportedProtocolVersion:
			var data mcp.UnsupportedProtocolVersionData
			if len(e.Data) > 0 && json.Unmarshal(e.Data, &data) == nil {
				if v, ok := pickVersion(data.Supported); ok {
					// A modern server that does not serve our newest
					// revision: ask again in its language, for the
					// capabilities. Its verdict stands whatever the
					// answer.
					c.setModern(v, nil)
					pctx, cancel := context.WithTimeout(ctx, c.opts.DiscoverTimeout)
					defer cancel()
					if res, err := c.discoverCall(pctx, v); err == nil {
						c.setDiscover(res)
					}
					return nil
				}
			}
		case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability:
			// Only a modern server answers these.
			c.setModern(version, nil)
			return nil
		}
	}
	c.log.Debug("client: server/discover probe failed; falling back to initialize", "err", err)
	return c.initialize(ctx, mcp.LatestLegacy)
}

// discoverCall sends server/discover in revision version, once: no
// -32022 retry, no cache.
func (c *Client) discoverCall(ctx context.Context, version string) (*mcp.DiscoverResult, error) {
	p := &mcp.RequestParams{}
	env := c.newEnvelope(&p.Meta, nil, version, false)
	var res mcp.DiscoverResult
	if err := c.exchange(ctx, mcp.MethodServerDiscover, p, &res, &env, nil); err != nil {
		return nil, err
	}
	return &res, nil
}

// Discover asks a modern server for its revisions, capabilities,
// instructions and identity (server/discover), which ServerCapabilities,
// ServerInfo and Instructions then report. On a legacy connection it
// returns ErrLegacy.
func (c *Client) Discover(ctx context.Context) (*mcp.DiscoverResult, error) {
	if err := c.mode().lacks(mcp.MethodServerDiscover); err != nil {
		return nil, err
	}
	p := &mcp.RequestParams{}
	var res mcp.DiscoverResult
	if err := c.call(ctx, mcp.MethodServerDiscover, p, &p.Meta, &res); err != nil {
		return nil, err
	}
	c.setDiscover(&res)
	return &res, nil
}

// setModern makes the connection modern in revision version.
func (c *Client) setModern(version string, res *mcp.DiscoverResult) {
	c.mu.Lock()
	c.version = version
	if res != nil {
		c.discover = res
	}
	c.mu.Unlock()
	c.setIdentity(res)
	c.setMode((*modernEra)(c))
}

func (c *Client) setDiscover(res *mcp.DiscoverResult) {
	c.mu.Lock()
	c.discover = res
	c.mu.Unlock()
	c.setIdentity(res)
}

func (c *Client) lastDiscover() *mcp.DiscoverResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.discover
}
