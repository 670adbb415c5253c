package streamable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/transport"
)

// The backwards-compatibility procedure of the Streamable HTTP transport
// (2025-03-26 and later, "Backwards Compatibility"): a client that wants
// to reach servers of the deprecated HTTP+SSE transport (2024-11-05)
// POSTs its first request to the URL; when that fails with 400, 404 or
// 405, it GETs the URL expecting an event stream whose first event,
// "endpoint", names where to POST, and then speaks the old transport:
// every message is a POST to that endpoint, every server message an
// event of that one stream (docs/design/legacy-sse.md).

// DefaultLegacyEndpointTimeout is the default of
// Options.LegacyEndpointTimeout.
const DefaultLegacyEndpointTimeout = 10 * time.Second

// ErrLegacyStreamEnded is the cause of a lost connection of the 2024-11-05
// transport: its event stream ended, and that transport has no way to
// resume it.
var ErrLegacyStreamEnded = errors.New("streamable: the event stream of the 2024-11-05 HTTP+SSE transport ended")

// legacyLink is a connection switched to the 2024-11-05 transport.
type legacyLink struct {
	post string // the endpoint messages are POSTed to
}

// Legacy reports whether the Conn speaks the deprecated HTTP+SSE
// transport of 2024-11-05, having fallen back to it.
func (c *Conn) Legacy() bool { return c.legacy.Load() != nil }

// fallBack tries the 2024-11-05 transport after the first POST of the
// Conn failed with err: when err is a 400, 404 or 405 without a JSON-RPC
// error in its body, and the URL answers
// a GET with an event stream that announces an endpoint, it returns the
// link; otherwise nil, and the caller keeps err.
func (c *Conn) fallBack(ctx context.Context, err error, m *jsonrpc.Message) *legacyLink {
	var se *StatusError
	if c.opts.NoLegacyFallback || !m.IsRequest() || c.contacted.Load() || !errors.As(err, &se) || se.RPC != nil {
		// A JSON-RPC error body says the URL speaks JSON-RPC over POST:
		// a Streamable HTTP server, whatever it refused.
		return nil
	}
	switch se.StatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
	default:
		return nil
	}
	c.legacyMu.Lock()
	defer c.legacyMu.Unlock()
	if l := c.legacy.Load(); l != nil {
		return l
	}
	if c.SessionID() != "" || c.contacted.Load() {
		return nil
	}
	l, ferr := c.openLegacy(ctx)
	if ferr != nil {
		c.log.Debug("streamable: no 2024-11-05 HTTP+SSE server either", "err", ferr)
		return nil
	}
	c.log.Info("streamable: the server speaks the 2024-11-05 HTTP+SSE transport", "endpoint", l.post)
	c.legacy.Store(l)
	return l
}

// openLegacy GETs the URL and waits, within LegacyEndpointTimeout and
// ctx, for the endpoint event; the stream then goes on, read by a
// goroutine of the Conn, for as long as the Conn lives.
func (c *Conn) openLegacy(ctx context.Context) (*legacyLink, error) {
	reqCtx, cancel := context.WithCancel(c.ctx) // the stream outlives ctx
	wait, stopWait := context.WithTimeout(ctx, c.opts.LegacyEndpointTimeout)
	defer stopWait()
	stop := context.AfterFunc(wait, cancel)
	fail := func(err error) (*legacyLink, error) {
		stop()
		cancel()
		return nil, err
	}
	req, _, err := c.newRequest(reqCtx, http.MethodGet, nil, contentSSE, false)
	if err != nil {
		return fail(err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fail(fmt.Errorf("streamable: GET: %w", err))
	}
	if resp.StatusCode != http.StatusOK || mediaType(resp.Header) != contentSSE {
		drainClose(resp.Body)
		return fail(fmt.Errorf("streamable: GET answered %s (%s), not an event stream", resp.Status, resp.Header.Get("Content-Type")))
	}
	rd := sse.NewReader(resp.Body, c.opts.MaxEventBytes)
	var post string
	for post == "" {
		ev, err := rd.Next()
		if err != nil {
			_ = resp.Body.Close()
			return fail(fmt.Errorf("streamable: waiting for the endpoint event: %w", err))
		}
		if ev.Type != "endpoint" {
			continue // nothing can be addressed to us before it
		}
		if post, err = c.sameOrigin(string(ev.Data)); err != nil {
			_ = resp.Body.Close()
			return fail(err)
		}
	}
	if !stop() { // the wait ended just now, and cancelled the stream
		_ = resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("streamable: waiting for the endpoint event: %w", context.Cause(wait))
	}
	if !c.goTracked(func() { c.readLegacy(rd, resp, cancel) }) {
		_ = resp.Body.Close()
		cancel()
		return nil, transport.ErrClosed
	}
	c.listeningOnce.Do(func() { close(c.listening) })
	return &legacyLink{post: post}, nil
}

// sameOrigin resolves the announced endpoint against the URL and refuses
// one on another origin: the messages, and the headers of Options (an
// Authorization among them), go only where the Conn was pointed.
func (c *Conn) sameOrigin(endpoint string) (string, error) {
	base, err := url.Parse(c.endpoint)
	if err != nil {
		return "", fmt.Errorf("streamable: %w", err)
	}
	u, err := base.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("streamable: the announced endpoint %q: %w", endpoint, err)
	}
	if u.Scheme != base.Scheme || u.Host != base.Host {
		return "", fmt.Errorf("streamable: the announced endpoint %q is not on the origin of %s", endpoint, c.endpoint)
	}
	return u.String(), nil
}

// readLegacy queues every message event of the stream for Read; when the
// stream ends the connection is lost (ErrLegacyStreamEnded).
func (c *Conn) readLegacy(rd *sse.Reader, resp *http.Response, cancel context.CancelFunc) {
	defer cancel()
	defer func() { _ = resp.Body.Close() }()
	for {
		ev, err := rd.Next()
		if errors.Is(err, sse.ErrEventTooLarge) {
			if in, _, ok := c.tooLarge(ev); ok && c.enqueueIn(c.ctx, in) != nil { // toolarge.go
				return
			}
			continue
		}
		if err != nil {
			if c.ctx.Err() == nil {
				_ = c.loseSession(fmt.Errorf("%w: %w", ErrLegacyStreamEnded, err))
			}
			return
		}
		if ev.Type != "" && ev.Type != "message" {
			continue
		}
		if err := c.enqueue(c.ctx, bytes.Clone(ev.Data)); err != nil {
			return
		}
	}
}

// writeLegacy POSTs one message to the endpoint of the 2024-11-05
// transport; any answer comes on the stream.
func (c *Conn) writeLegacy(ctx context.Context, l *legacyLink, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.post, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("streamable: %w", err)
	}
	for k, vs := range c.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", contentJSON)
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.requestError(ctx, "POST", err)
	}
	defer drainClose(resp.Body)
	if resp.StatusCode/100 != 2 {
		return c.statusError(ctx, resp, nil)
	}
	return nil
}
