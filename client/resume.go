package client

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// SessionState is what a client needs to continue a legacy session
// (2025-11-25 and older, over Streamable HTTP) without initialize: the
// session id the server assigned, the revision it negotiated, and what
// its initialize result said. Client.SessionState returns it;
// Options.Resume takes it back, in another Client or another process. It
// encodes as JSON with the names of its tags; it holds no credential
// (the transport's Authorization is not part of it), but the session id
// lets whoever holds it act in the session: store it as privately as the
// client's tokens. docs/design/client-resume.md.
type SessionState struct {
	SessionID       string                 `json:"sessionId"`
	ProtocolVersion string                 `json:"protocolVersion"`
	Capabilities    mcp.ServerCapabilities `json:"capabilities"`
	ServerInfo      mcp.Implementation     `json:"serverInfo"`
	Instructions    string                 `json:"instructions,omitzero"`
}

// ErrBadSessionState is returned by Connect when Options.Resume holds no
// session id, one that is not visible ASCII (the specification's rule for
// a session id), or a revision that is not a legacy one this client
// speaks.
var ErrBadSessionState = errors.New("client: Options.Resume is not a legacy session this client can continue")

// check reports why s cannot be resumed.
func (s *SessionState) check() error {
	switch {
	case s.SessionID == "":
		return fmt.Errorf("%w: no session id", ErrBadSessionState)
	case !mcp.ValidSessionID(s.SessionID):
		return fmt.Errorf("%w: the session id is not visible ASCII", ErrBadSessionState)
	case !slices.Contains(mcp.LegacyVersions(), s.ProtocolVersion):
		return fmt.Errorf("%w: protocol version %q", ErrBadSessionState, s.ProtocolVersion)
	}
	return nil
}

// sessionResumer is a transport that can continue a session
// (transport/streamable's Conn).
type sessionResumer interface {
	SessionID() string
	Resume(id, version string, initParams []byte) error
}

// resume continues Options.Resume's session (see Options.Resume): the
// transport takes the session id, a ping proves the server still has
// it. It reports false, with no error, when the connection is to go on
// as if Resume were not set: the transport has no sessions, or the
// server refused the ping (404: the session is gone).
func (c *Client) resume(ctx context.Context) (bool, error) {
	st := c.opts.Resume
	if err := st.check(); err != nil {
		return false, err
	}
	r, ok := c.t.(sessionResumer)
	if !ok {
		c.log.Info("client: the transport has no sessions; Options.Resume ignored")
		return false, nil
	}
	params, err := json.Marshal(&mcp.InitializeParams{ProtocolVersion: st.ProtocolVersion, Capabilities: c.caps, ClientInfo: c.opts.Info})
	if err != nil {
		return false, fmt.Errorf("client: resume: %w", err)
	}
	if err := r.Resume(st.SessionID, st.ProtocolVersion, params); err != nil {
		return false, fmt.Errorf("client: resume: %w", err)
	}
	pctx, cancel := c.withTimeout(ctx, mcp.MethodPing)
	err = c.rpc(pctx, mcp.MethodPing, nil, nil, jsonrpc.CallOptions{}, 0)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return false, fmt.Errorf("client: resume: %w", ctx.Err())
		}
		select {
		case <-c.conn.Done():
			return false, fmt.Errorf("client: resume: %w", c.conn.Err())
		default:
		}
		c.log.Info("client: the stored session cannot be continued; opening a new one", "session", st.SessionID, "err", err)
		if err := r.Resume("", "", nil); err != nil {
			return false, fmt.Errorf("client: resume: %w", err)
		}
		return false, nil
	}
	c.init = mcp.InitializeResult{
		ProtocolVersion: st.ProtocolVersion,
		Capabilities:    st.Capabilities,
		ServerInfo:      st.ServerInfo,
		Instructions:    st.Instructions,
	}
	c.lenient.Store(!c.opts.StrictServerRequests)
	c.setMode((*legacyEra)(c))
	c.resumed = true
	return true, nil
}

// Resumed reports whether Connect continued the session of
// Options.Resume (false: it opened a new one, or the connection is
// modern).
func (c *Client) Resumed() bool { return c.resumed }

// SessionState returns what Options.Resume needs to continue this
// connection's session in another Client: false when there is none to
// continue (a modern connection, a transport without sessions, a server
// that assigned no session id).
func (c *Client) SessionState() (SessionState, bool) {
	r, ok := c.t.(sessionResumer)
	if !ok || c.Era() != EraLegacy {
		return SessionState{}, false
	}
	id := r.SessionID()
	if id == "" {
		return SessionState{}, false
	}
	return SessionState{
		SessionID:       id,
		ProtocolVersion: c.init.ProtocolVersion,
		Capabilities:    c.init.Capabilities,
		ServerInfo:      c.init.ServerInfo,
		Instructions:    c.init.Instructions,
	}, true
}
