package streamable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// cursor is what survives the reconnections of one stream: the last event
// id seen and the server's retry: delay.
type cursor struct {
	lastID   string
	retry    time.Duration
	hasRetry bool
}

// consumed is how one connection of a stream ended.
type consumed struct {
	messages int   // messages delivered
	stopped  bool  // deliver asked to stop
	err      error // nil: a clean end (EOF)
}

// errGraceOver ends a POST stream that stayed open ResponseGrace after
// its response.
var errGraceOver = errors.New("streamable: the stream stayed open after its response")

// consume reads the events of one connection and hands each message to
// deliver, until the stream ends or deliver returns false. Events with
// empty data (priming, keep-alives), comments, events of another type than
// "message", and data that is not a JSON-RPC message are skipped. The
// stream's last event id and retry: go to cur as they come.
func (c *Conn) consume(body io.Reader, cur *cursor, deliver func(in inbound, m *jsonrpc.Message) bool) consumed {
	r := sse.NewReader(body, c.opts.MaxEventBytes)
	var res consumed
	for {
		ev, err := r.Next()
		if id := r.LastEventID(); id != "" {
			cur.lastID = id
		}
		if d, ok := r.Retry(); ok {
			cur.retry, cur.hasRetry = d, true
		}
		if err != nil {
			if errors.Is(err, sse.ErrEventTooLarge) {
				if in, m, ok := c.tooLarge(ev); ok && !deliver(in, m) { // toolarge.go
					res.stopped = true
					return res
				}
				continue
			}
			if !errors.Is(err, io.EOF) {
				res.err = err
			}
			return res
		}
		if len(ev.Data) == 0 {
			continue
		}
		if ev.Type != "" && ev.Type != "message" {
			c.log.Debug("streamable: skipped an event of another type", "type", ev.Type)
			continue
		}
		m, derr := wire.Decode(ev.Data, inLimits(c.opts.MaxEventBytes))
		if derr != nil {
			c.log.Debug("streamable: skipped an event that is not a JSON-RPC message", "err", derr)
			continue
		}
		res.messages++
		if !deliver(inbound{data: ev.Data}, m) {
			res.stopped = true
			return res
		}
	}
}

// postStream reads the event stream that answered request id, resuming
// it with GET until the response arrives (see Write). It owns body and
// cancel. The stream of a modern request (ms set, not legacy) is never
// resumed: the 2026-07-28 transport has no resumption, and a stream that
// ends before its response fails the request, unless the caller
// cancelled it. A session-less legacy request's stream (ms.legacy) is
// resumed as any legacy one, unless the caller cancelled it.
func (c *Conn) postStream(body io.ReadCloser, cancel context.CancelCauseFunc, id mcp.ID, isInit bool, ms *modernStream) {
	if ms != nil {
		defer c.untrackModern(id)
		defer ms.stop()
	}
	defer c.dropOrigins(id)
	var cur cursor
	misses := 0 // consecutive resume attempts without a message
	for {
		gotResponse := false
		var grace idleTimer
		res := c.consume(body, &cur, func(in inbound, m *jsonrpc.Message) bool {
			if m.IsRequest() && (ms == nil || ms.legacy) {
				c.noteOrigin(m.ID, id)
			}
			if !gotResponse && m.IsResponse() && m.ID == id {
				if isInit {
					c.noteInitResult(m)
				}
				gotResponse = true
				cancelStream := cancel
				grace = c.newGraceTimer(ResponseGrace, func() { cancelStream(errGraceOver) })
			}
			return c.enqueueIn(c.ctx, in) == nil
		})
		if grace != nil {
			grace.Stop()
		}
		cancel(nil)
		_ = body.Close()
		if gotResponse || res.stopped || c.ctx.Err() != nil {
			return
		}
		if ms != nil && ms.cancelled() {
			return // the call gave up: nobody waits for an answer
		}
		if ms != nil && !ms.legacy {
			why := "ended"
			if res.err != nil {
				why = "broke (" + res.err.Error() + ")"
			}
			c.loseAnswer(id, fmt.Errorf("the event stream %s before the response (2026-07-28 streams are not resumed; send the request again)", why))
			return
		}
		if res.messages > 0 {
			misses = 0
		}
		why := "ended"
		if res.err != nil {
			why = "broke (" + res.err.Error() + ")"
		}
		if cur.lastID == "" {
			c.loseAnswer(id, fmt.Errorf("the event stream %s before the response, with no event id to resume from", why))
			return
		}
		c.log.Debug("streamable: resuming a POST stream", "id", id.String(), "lastEventID", cur.lastID, "why", why)
		for {
			if misses >= MaxStreamResumes {
				c.loseAnswer(id, fmt.Errorf("the event stream %s before the response and %d attempts to resume it brought nothing", why, misses))
				return
			}
			misses++
			if !c.wait(c.ctx, c.retryDelay(cur.retry, cur.hasRetry)) {
				return
			}
			g, err := c.openGET(c.ctx, cur.lastID, 0)
			if err == nil {
				body, cancel = g.body, g.cancel
				break
			}
			if c.ctx.Err() != nil {
				return
			}
			if permanent(err) {
				c.loseAnswer(id, fmt.Errorf("resuming the event stream: %w", err))
				return
			}
			c.log.Debug("streamable: resuming a POST stream failed", "id", id.String(), "err", err)
		}
	}
}

// permanent reports whether a failed resume is not worth repeating: a
// 4xx other than 408 (timeout), 409 (conflict: the server may still hold
// the previous connection), 425 and 429.
func permanent(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode/100 != 4 {
		return false
	}
	switch se.StatusCode {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return true
}

// failRequest queues an error response for request id, whose stream
// failed for good, so that the call waiting for it fails.
func (c *Conn) failRequest(id mcp.ID, cause error) {
	c.log.Warn("streamable: no response for a request", "id", id.String(), "err", cause)
	msg := wire.EncodeError(id, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: streamable transport: %v", cause))
	_ = c.enqueue(c.ctx, msg)
}

// loseAnswer is failRequest for a request whose answer the connection
// lost (its stream broke for good): the error carries
// transport.LostAnswerData, so that the caller can tell it from the
// server's own answer.
func (c *Conn) loseAnswer(id mcp.ID, cause error) {
	c.log.Warn("streamable: no response for a request", "id", id.String(), "err", cause)
	e := jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: streamable transport: %v", cause).WithData(jsontext.Value(transport.LostAnswerData))
	_ = c.enqueue(c.ctx, wire.EncodeError(id, e))
}

// getConn is one GET event stream.
type getConn struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	body   io.ReadCloser
	timer  idleTimer // the idle timer, if any
}

func (g *getConn) close() {
	if g.timer != nil {
		g.timer.Stop()
	}
	g.cancel(nil)
	_ = g.body.Close()
}

// idleFired reports whether the idle timer ended the connection.
func (g *getConn) idleFired() bool {
	return errors.Is(context.Cause(g.ctx), ErrListenIdle)
}

// openGET opens an event stream with GET (Last-Event-ID when lastID is
// set). With idle > 0, the connection is cancelled with ErrListenIdle
// when no byte arrives for idle, from the moment the request is sent.
func (c *Conn) openGET(parent context.Context, lastID string, idle time.Duration) (*getConn, error) {
	ctx, cancel := context.WithCancelCause(parent)
	g := &getConn{ctx: ctx, cancel: cancel}
	if idle > 0 {
		g.timer = c.newIdleTimer(idle, func() { cancel(ErrListenIdle) })
	}
	fail := func(err error) (*getConn, error) {
		if g.timer != nil {
			g.timer.Stop()
		}
		cancel(nil)
		return nil, err
	}
	req, _, err := c.newRequest(ctx, http.MethodGet, nil, contentSSE, true)
	if err != nil {
		return fail(err)
	}
	if lastID != "" {
		req.Header.Set(headerLastEventID, lastID)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if g.idleFired() {
			err = ErrListenIdle
		}
		return fail(fmt.Errorf("streamable: GET: %w", err))
	}
	if resp.StatusCode/100 != 2 {
		err := c.statusError(ctx, resp, nil)
		drainClose(resp.Body)
		return fail(err)
	}
	if ct := mediaType(resp.Header); ct != contentSSE {
		drainClose(resp.Body)
		return fail(fmt.Errorf("streamable: GET answered %s with Content-Type %q, not an event stream", resp.Status, ct))
	}
	g.body = resp.Body
	if g.timer != nil {
		g.body = &idleReader{ReadCloser: resp.Body, t: g.timer, d: idle}
	}
	return g, nil
}

// idleReader re-arms the idle timer each time bytes arrive.
type idleReader struct {
	io.ReadCloser
	t idleTimer
	d time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if n > 0 {
		r.t.Reset(r.d)
	}
	return n, err
}

// reinitialize replaces session lost, which the server answered 404 for,
// with a new one: it replays the initialize request with a fresh id,
// reads and discards its response, takes the new session id, and sends
// notifications/initialized again (unless skipInitialized: the message
// being retried is that notification). Concurrent Writes that hit the
// same 404 wait for one re-initialization and retry.
func (c *Conn) reinitialize(ctx context.Context, lost string, skipInitialized bool) error {
	c.reinitMu.Lock()
	defer c.reinitMu.Unlock()
	c.mu.Lock()
	current, params, sawInit, initialized := c.session, c.initParams, c.sawInit, c.initialized
	c.mu.Unlock()
	if current != lost {
		return nil // another Write re-initialized already
	}
	if !sawInit {
		return errors.New("no initialize request to replay")
	}
	id := mcp.StringID("mcpkit-reinitialize-" + strconv.FormatInt(c.reinitSeq.Add(1), 10))
	var p any
	if params != nil {
		p = params
	}
	body, err := wire.EncodeRequest(id, mcp.MethodInitialize, p)
	if err != nil {
		return err
	}
	session, version, err := c.replayInitialize(ctx, id, body)
	if err != nil {
		return fmt.Errorf("re-initializing: %w", err)
	}
	c.mu.Lock()
	c.session = session
	if version != "" {
		c.version = version
	}
	c.mu.Unlock()
	if initialized != nil && !skipInitialized {
		m, derr := wire.Decode(initialized, outLimits)
		if derr != nil {
			return derr
		}
		if err := c.post(ctx, initialized, m, false, nil, nil); err != nil {
			return fmt.Errorf("re-sending notifications/initialized: %w", err)
		}
	}
	c.log.Info("streamable: re-initialized", "session", session)
	c.restartListener()
	return nil
}

// replayInitialize POSTs an initialize request without session headers
// and returns the new session id and negotiated revision.
func (c *Conn) replayInitialize(ctx context.Context, id mcp.ID, body []byte) (session, version string, err error) {
	reqCtx, cancel := context.WithCancelCause(c.ctx)
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	defer stop()
	req, _, err := c.newRequest(reqCtx, http.MethodPost, body, acceptPOST, false)
	if err != nil {
		return "", "", err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", "", c.requestError(ctx, "POST", err)
	}
	defer drainClose(resp.Body)
	if resp.StatusCode/100 != 2 {
		return "", "", c.statusError(ctx, resp, nil)
	}
	session = resp.Header.Get(headerSessionID)
	var answer *jsonrpc.Message
	switch ct := mediaType(resp.Header); ct {
	case contentJSON:
		data, err := readCapped(resp.Body, resp.ContentLength, c.opts.MaxEventBytes)
		if err != nil {
			return "", "", c.requestError(ctx, "POST", err)
		}
		m, derr := wire.Decode(data, inLimits(c.opts.MaxEventBytes))
		if derr != nil {
			return "", "", derr
		}
		answer = m
	case contentSSE:
		var cur cursor
		var dropped error // the answer, over MaxEventBytes
		res := c.consume(resp.Body, &cur, func(in inbound, m *jsonrpc.Message) bool {
			if m.IsResponse() && m.ID == id {
				answer, dropped = m, in.err
				return false
			}
			return true // anything else on the initialize stream is dropped
		})
		if dropped != nil {
			return "", "", dropped
		}
		if answer == nil && res.err != nil {
			return "", "", c.requestError(ctx, "POST", res.err)
		}
	default:
		return "", "", fmt.Errorf("unexpected Content-Type %q", ct)
	}
	switch {
	case answer == nil || !answer.IsResponse() || answer.ID != id:
		return "", "", errors.New("no response to initialize")
	case answer.Error != nil:
		return "", "", answer.Error
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(answer.Result, &r)
	return session, r.ProtocolVersion, nil
}
