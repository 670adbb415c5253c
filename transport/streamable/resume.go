package streamable

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// ErrResumedSessionGone is why the first Write on a resumed session
// failed when the server answered 404: it no longer has the session (see
// Resume). The error also wraps a *StatusError of the 404.
var ErrResumedSessionGone = errors.New("streamable: the resumed session is gone")

// Resume makes the Conn continue the legacy session id, in which the
// server negotiated revision version, instead of opening one with
// initialize: every request after it carries both headers, as after an
// initialize answered with them. initParams are the params (a JSON
// object, or nil) of the initialize request the Conn replays if the
// server loses the session later, as it does after any lost session (see
// Write); the replay is followed by notifications/initialized.
//
// Until a request on the resumed session succeeds, the server's 404 does
// not re-initialize: the Write fails with ErrResumedSessionGone and the
// Conn forgets the session, its revision and initParams, so that the
// caller can open a new session with initialize (the client does this
// when Options.Resume names a session the server no longer has).
//
// Resume with an empty id forgets whatever session the Conn holds (no
// DELETE is sent), so that the next initialize opens a new one. With an
// id, it must be called before the first Write, and the id must be
// visible ASCII (0x21 to 0x7E), as the specification requires of a
// session id.
func (c *Conn) Resume(id, version string, initParams []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id == "" {
		c.session, c.version = "", ""
		c.initParams, c.sawInit, c.initialized = nil, false, nil
		c.resumed.Store(false)
		return nil
	}
	switch {
	case c.closed:
		return errors.New("streamable: Resume after Close")
	case c.session != "" || c.sawInit || c.contacted.Load() || c.legacy.Load() != nil:
		return errors.New("streamable: Resume after the first Write")
	case !mcp.ValidSessionID(id):
		return errors.New("streamable: Resume: a session id must be visible ASCII (0x21 to 0x7E)")
	case version == "":
		return errors.New("streamable: Resume: no protocol version")
	case initParams != nil && !jsontext.Value(initParams).IsValid():
		return errors.New("streamable: Resume: the initialize params are not valid JSON")
	}
	c.session, c.version = id, version
	c.initParams, c.sawInit = jsontext.Value(initParams).Clone(), true
	c.initialized = []byte(`{"jsonrpc":"2.0","method":"` + mcp.NotificationInitialized + `"}`)
	c.resumed.Store(true)
	return nil
}

// refuseResumed answers a 404 to the resumed session before any request
// on it succeeded (see Resume): the session is forgotten, and the Write
// fails with the 404.
func (c *Conn) refuseResumed(nf *notFoundError) error {
	c.mu.Lock()
	if c.session == nf.session {
		c.session, c.version = "", ""
		c.initParams, c.sawInit, c.initialized = nil, false, nil
	}
	c.mu.Unlock()
	c.resumed.Store(false)
	c.log.Info("streamable: the resumed session is gone", "session", nf.session)
	return fmt.Errorf("%w: %w", ErrResumedSessionGone,
		&StatusError{Method: http.MethodPost, StatusCode: http.StatusNotFound, Status: "404 Not Found"})
}
