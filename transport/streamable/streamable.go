package streamable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// Limits and delays. Each one is named here and documented where it
// applies.
const (
	// DefaultMaxEventBytes is the default of Options.MaxEventBytes: 4 MiB,
	// the size of the largest JSON-RPC message jsonrpc accepts by default.
	DefaultMaxEventBytes = 4 << 20
	// DefaultListenIdleTimeout is the default of
	// Options.ListenIdleTimeout (the reference SDKs' sse_read_timeout).
	DefaultListenIdleTimeout = 300 * time.Second
	// DefaultMaxListenFailures is the default of
	// Options.MaxListenFailures (the reference SDKs'
	// MAX_RECONNECTION_ATTEMPTS).
	DefaultMaxListenFailures = 2

	// DefaultRetry is the reconnection delay when the server sent no
	// retry: field.
	DefaultRetry = time.Second
	// MinRetry is the shortest reconnection delay, whatever the server
	// asks for.
	MinRetry = 100 * time.Millisecond
	// MaxListenBackoff caps the delay of the GET listener after clean
	// ends that delivered no message (see Listen).
	MaxListenBackoff = 30 * time.Second

	// ReadQueueSize bounds the messages received and not yet taken by
	// Read. When the queue is full, the goroutines reading streams stop
	// reading (and so does a Write whose request was answered with a
	// JSON body) until Read takes one: backpressure reaches the server
	// through TCP.
	ReadQueueSize = 64
	// MaxStreamResumes bounds the consecutive attempts to resume a POST
	// stream that delivered no message; a message resets the count. After
	// that, the request fails (see Write).
	MaxStreamResumes = 10
	// ResponseGrace is how long a POST stream is read after it delivered
	// the response to its request, for the server to end it; then the
	// Conn closes it. (The spec says the server SHOULD end the stream
	// after the response.)
	ResponseGrace = time.Second
	// DeleteTimeout bounds the DELETE that Close sends.
	DeleteTimeout = 2 * time.Second
	// maxErrorBody caps what is read of an HTTP error's body.
	maxErrorBody = 64 << 10
)

// Header names of the transport (HTTP header names are case-insensitive).
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "MCP-Protocol-Version"
	headerLastEventID     = "Last-Event-ID"
	contentJSON           = "application/json"
	contentSSE            = "text/event-stream"
)

var (
	// ErrSessionLost is returned by Write when the server answered 404 to
	// a request that carried the session id, the Conn re-initialized a
	// new session, and the message was refused with 404 again (or the
	// re-initialization failed). It is final: later Writes fail with it,
	// Read returns it once the queued messages are taken, and the
	// listener stops with it.
	ErrSessionLost = errors.New("streamable: the server lost the session and re-initializing did not recover it")
	// ErrListen405 is why the listener stopped when the server answered
	// its GET with 405 Method Not Allowed: it offers no listening stream.
	ErrListen405 = errors.New("streamable: the server offers no GET listening stream (405)")
	// ErrListenFailures is why the listener stopped after
	// Options.MaxListenFailures consecutive failed attempts; the error
	// also wraps the last failure.
	ErrListenFailures = errors.New("streamable: GET listener failed too many times in a row")
	// ErrListenIdle is the failure of a listener attempt that received no
	// byte for Options.ListenIdleTimeout.
	ErrListenIdle = errors.New("streamable: GET listener idle timeout")
	// ErrEventTooLarge reports an SSE event, or a JSON body, over
	// Options.MaxEventBytes. Read's error for such an event is also a
	// *transport.TooLargeError holding both ends of its data.
	ErrEventTooLarge = errors.New("streamable: message over the MaxEventBytes limit")
)

// StatusError is an HTTP answer with an error status.
type StatusError struct {
	// Method is the HTTP method of the request: POST, GET or DELETE.
	Method string
	// StatusCode and Status are the response's (Status as "404 Not Found").
	StatusCode int
	Status     string
	// RPC is the JSON-RPC error the body carried, if any.
	RPC *jsonrpc.Error
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("streamable: %s answered HTTP %s", e.Method, e.Status)
	if e.RPC != nil {
		s += fmt.Sprintf(" (JSON-RPC error %d: %s)", e.RPC.Code, e.RPC.Message)
	}
	return s
}

// HTTPStatus returns StatusCode: a package that does not import this one
// (the client, deciding whether a failed request may be sent again) finds
// the status through an interface with this method.
func (e *StatusError) HTTPStatus() int { return e.StatusCode }

// Unwrap returns the JSON-RPC error of the body, so that jsonrpc.AsError
// finds it.
func (e *StatusError) Unwrap() error {
	if e.RPC == nil {
		return nil
	}
	return e.RPC
}

// Options configures a Conn. The zero value is usable.
type Options struct {
	// HTTPClient sends every request. Default: a client of the Conn's own
	// (a clone of http.DefaultTransport, no overall timeout: streams are
	// long-lived), whose idle connections Close closes. A copy of it
	// sends, under the redirect policy (redirect.go): its CheckRedirect
	// is consulted after that policy, never instead of it.
	HTTPClient *http.Client
	// AllowCrossOriginRedirects follows redirects to another origin
	// (scheme, host, port), which fail with ErrCrossOriginRedirect by
	// default; the MCP headers, credentials and Header never go there.
	AllowCrossOriginRedirects bool
	// MaxRedirects caps one request's redirects (DefaultMaxRedirects).
	MaxRedirects int
	// KeepSession: Close sends no DELETE, so that the session can be
	// continued later (Resume; client.Options.Resume).
	KeepSession bool
	// Header holds extra headers sent on every request (such as
	// Authorization). The transport's own headers take precedence.
	Header http.Header
	// MaxEventBytes caps one SSE event and one JSON body. Default
	// DefaultMaxEventBytes. A bigger event is dropped and its stream read
	// on; Read returns a *transport.TooLargeError in its place, whose
	// ends name the message: a jsonrpc.Conn fails the call it answered,
	// or answers the server's request with -32600 (toolarge.go).
	MaxEventBytes int
	// ListenIdleTimeout is how long a listener attempt may receive no byte
	// (headers included) before it counts as failed. Default
	// DefaultListenIdleTimeout. Servers keep a healthy stream alive with
	// SSE comments.
	ListenIdleTimeout time.Duration
	// MaxListenFailures consecutive failed listener attempts stop the
	// listener. Default DefaultMaxListenFailures.
	MaxListenFailures int
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
	// NoLegacyFallback turns off the backwards-compatibility procedure:
	// by default, when the first request is refused with 400, 404 or
	// 405, the Conn GETs the URL and, if it answers with the "endpoint"
	// event of the deprecated HTTP+SSE transport (2024-11-05), speaks
	// that transport from then on (see Legacy).
	NoLegacyFallback bool
	// LegacyEndpointTimeout bounds the wait for that endpoint event.
	// Default DefaultLegacyEndpointTimeout.
	LegacyEndpointTimeout time.Duration
}

// Conn is the client side of a Streamable HTTP connection to one MCP
// endpoint. It implements transport.Conn: Write is safe for concurrent
// use, Read is called by one goroutine at a time, Close by anyone.
type Conn struct {
	endpoint  string
	opts      Options
	idleAfter func(time.Duration, func()) idleTimer // tests only: a manual idle clock
	hc        *http.Client
	ownClient bool
	log       *slog.Logger
	// defaultRetry is DefaultRetry; tests shorten it.
	defaultRetry time.Duration
	// Tests only: a manual clock for the ResponseGrace timer, and one for
	// the waits between attempts (see wait).
	graceAfter func(time.Duration, func()) idleTimer
	waitAfter  func(time.Duration) <-chan time.Time

	ctx    context.Context // cancelled by Close: every request and goroutine of the Conn
	cancel context.CancelFunc
	queue  chan inbound
	done   chan struct{} // closed by Close
	lost   chan struct{} // closed when the session is lost for good
	wg     sync.WaitGroup

	listening     chan struct{} // closed when a GET stream is first established
	listeningOnce sync.Once

	reinitMu  sync.Mutex // one re-initialization at a time
	reinitSeq atomic.Int64

	mu      sync.Mutex
	closed  bool
	session string
	version string
	// sessionValue is the Mcp-Session-Id header's value, shared by the
	// requests of the session (see valueJSON).
	sessionValue []string
	initParams   jsontext.Value // of the initialize request, for replay
	sawInit      bool
	initialized  []byte // the notifications/initialized message, for replay
	lostErr      error
	lis          listenState
	// modern holds the 2026-07-28 requests in flight, by id, with what
	// cancels their POST (closing its stream is their cancellation).
	modern map[mcp.ID]context.CancelCauseFunc
	// origins maps the id of a server request that arrived on the
	// stream of one of our requests to that request's id, until we
	// answer it: an answer that cannot be delivered fails that request.
	origins map[mcp.ID]mcp.ID

	closeOnce sync.Once
	closeErr  error

	// The 2024-11-05 fallback (legacysse.go): contacted is set by the
	// first POST that succeeds (no fallback after it); legacy, once the
	// Conn speaks the old transport; legacyMu, one attempt at a time.
	contacted atomic.Bool
	legacy    atomic.Pointer[legacyLink]
	legacyMu  sync.Mutex
	resumed   atomic.Bool // Resume set the session (resume.go)

	// responder is the jsonrpc.Conn's direct delivery of a JSON answer
	// (SetResponder); nil until one is set.
	responder atomic.Pointer[func([]byte) bool]
	// unread counts the messages queued for Read and not yet dealt
	// with: taken by Read, and the reader back in Read for the next one
	// (handedOut, the reader's own, marks a message given and not yet
	// counted off). A JSON answer goes straight to its call only when
	// it is zero, so it never overtakes a message that came before it.
	unread    atomic.Int64
	handedOut bool

	// names holds recent Mcp-Name header values (nameValue).
	names [nameSlots]atomic.Pointer[nameEntry]
}

var (
	_ transport.Conn    = (*Conn)(nil)
	_ jsonrpc.Responder = (*Conn)(nil)
)

// SetResponder implements jsonrpc.Responder: a JSON answer to a POSTed
// request is handed to deliver on the goroutine of the Write that sent
// the request, decoded once, instead of being queued for Read, when no
// message queued before it is still to be dealt with (the answer to
// initialize excepted: the Conn reads it first). Whatever deliver
// declines, or comes while earlier messages wait, is queued as before.
func (c *Conn) SetResponder(deliver func(data []byte) bool) {
	c.responder.Store(&deliver)
}

// outLimits: the envelope of an outgoing message is decoded only to route
// it; the layers above bound what they send.
var outLimits = jsonrpc.Limits{MaxBytes: math.MaxInt, MaxDepth: math.MaxInt}

// New returns a Conn to the MCP endpoint (an http or https URL). opts may
// be nil. Nothing is sent until the first Write.
func New(endpoint string, opts *Options) *Conn {
	c := &Conn{endpoint: endpoint, defaultRetry: DefaultRetry, listening: make(chan struct{})}
	if opts != nil {
		c.opts = *opts
	}
	o := &c.opts
	if o.MaxEventBytes <= 0 {
		o.MaxEventBytes = DefaultMaxEventBytes
	}
	if o.ListenIdleTimeout <= 0 {
		o.ListenIdleTimeout = DefaultListenIdleTimeout
	}
	if o.MaxListenFailures <= 0 {
		o.MaxListenFailures = DefaultMaxListenFailures
	}
	if o.LegacyEndpointTimeout <= 0 {
		o.LegacyEndpointTimeout = DefaultLegacyEndpointTimeout
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		c.ownClient = true
	}
	c.hc = c.redirectClient(hc)
	c.log = o.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.queue = make(chan inbound, ReadQueueSize)
	c.done = make(chan struct{})
	c.lost = make(chan struct{})
	return c
}

// SessionID returns the session id the server assigned ("" before
// initialize, or when the server uses none).
func (c *Conn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// ProtocolVersion returns the revision of the initialize result, sent as
// MCP-Protocol-Version ("" before it).
func (c *Conn) ProtocolVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// Read returns the next message received on any stream. It returns
// transport.ErrClosed after Close, and ErrSessionLost (once the queued
// messages are taken) when the session was lost for good.
func (c *Conn) Read(ctx context.Context) ([]byte, error) {
	if c.handedOut {
		// The reader calls Read again once it has dealt with the
		// message it was given last: that one is done (see unread).
		c.handedOut = false
		c.unread.Add(-1)
	}
	select {
	case <-c.done:
		return nil, transport.ErrClosed
	default:
	}
	select {
	case in := <-c.queue:
		c.handedOut = true
		return in.data, in.err
	case <-c.done:
		return nil, transport.ErrClosed
	case <-c.lost:
		select {
		case in := <-c.queue:
			c.handedOut = true
			return in.data, in.err
		default:
		}
		return nil, c.lostError()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Conn) lostError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lostErr
}

// usable reports why the Conn may not send: closed, or session lost.
func (c *Conn) usable() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return transport.ErrClosed
	}
	return c.lostErr
}

// Write sends one message as a POST and returns once the response headers
// are in (it does not wait for an SSE stream to end):
//
//   - a notification or a response: 202 (any 2xx) is success;
//   - a request answered with a JSON body: the message is queued for Read
//     (an id-less JSON-RPC error body is returned as Write's error);
//   - a request answered 202 or 204 without a body (not what the spec
//     asks): success; the response can then only come on another stream;
//   - a request answered with an event stream: a goroutine of the Conn
//     reads it and queues every message on it. If the stream ends (cleanly
//     or not) before the response to the request, the Conn resumes it with
//     GET and Last-Event-ID after the server's retry: delay (DefaultRetry
//     when none, never under MinRetry), again on each further end, at most
//     MaxStreamResumes times in a row without a message. If the stream
//     fails for good (no event id to resume from, resumes exhausted, a
//     resume refused with a 4xx), the Conn queues a JSON-RPC error
//     response (-32603) for the request, naming the cause, so that the
//     call waiting for it fails; its data is transport.LostAnswerData:
//     the error is the connection's, not the server's answer. An event
//     over MaxEventBytes is a *transport.TooLargeError for Read (see
//     Options.MaxEventBytes).
//   - an HTTP error status: when the body is a JSON-RPC error response to
//     this request (it carries its id), it is queued for the waiting call
//     and Write succeeds; otherwise Write returns a *StatusError naming
//     the status (and the JSON-RPC error of the body, if any).
//   - 404 to a request that carried the session id: see ErrSessionLost.
//
// ctx bounds the POST until its response headers (and a JSON body); the
// streams that follow are bounded by Close only — except the stream of a
// modern (2026-07-28) request, which ctx bounds to its end: closing it is
// that request's cancellation, and it is never resumed (see the package
// documentation).
func (c *Conn) Write(ctx context.Context, out transport.Message) error {
	msg := out.Data
	if err := c.usable(); err != nil {
		return err
	}
	body := msg // the Conn's own: it may be sent again (a retry, re-initialization)
	if !out.Owned {
		body = bytes.Clone(msg)
	}
	var m *jsonrpc.Message
	if r := out.Modern; r.ID.IsValid() && r.Method != "" && (r.Version != "" || plainLegacy(r.Method, body)) {
		// A request jsonrpc.Conn encoded and described: its route is
		// known, so it is not decoded again.
		m = &jsonrpc.Message{ID: r.ID, Method: r.Method}
	} else {
		var derr error
		if m, derr = wire.DecodeOwned(body, outLimits); derr != nil {
			return fmt.Errorf("streamable: refusing to send an invalid message: %w", derr)
		}
	}
	if l := c.legacy.Load(); l != nil {
		return c.writeLegacy(ctx, l, body)
	}
	if m.IsNotification() && m.Method == mcp.NotificationCancelled && c.cancelModern(m) {
		return nil
	}
	var mr *modernRequest
	if r, ok := modernOf(m, out.Modern); ok {
		mr = &r
	}
	isInit := m.IsRequest() && m.Method == mcp.MethodInitialize && mr == nil
	switch {
	case isInit:
		c.mu.Lock()
		c.initParams, c.sawInit = bytes.Clone(m.Params), true
		c.mu.Unlock()
	case m.IsNotification() && m.Method == mcp.NotificationInitialized:
		c.mu.Lock()
		c.initialized = body
		c.mu.Unlock()
	}
	err := c.post(ctx, body, m, isInit, mr, out.Header)
	if err == nil {
		c.contacted.Store(true)
	} else if l := c.fallBack(ctx, err, m); l != nil {
		return c.writeLegacy(ctx, l, body)
	}
	if m.IsResponse() {
		err = c.deliverAnswer(ctx, body, m, err)
	}
	nf, ok := asNotFound(err)
	if !ok {
		return err
	} else if c.resumed.Load() && !c.contacted.Load() {
		return c.refuseResumed(nf) // resume.go
	}
	c.log.Info("streamable: session not found; re-initializing", "session", nf.session)
	isInitialized := m.IsNotification() && m.Method == mcp.NotificationInitialized
	if rerr := c.reinitialize(ctx, nf.session, isInitialized); rerr != nil {
		if errors.Is(rerr, transport.ErrClosed) || ctx.Err() != nil {
			return rerr
		}
		return c.loseSession(rerr)
	}
	err = c.post(ctx, body, m, isInit, nil, out.Header)
	if _, ok := asNotFound(err); ok {
		return c.loseSession(errors.New("the retried message was refused with 404 again"))
	}
	return err
}

// plainLegacy reports whether a request jsonrpc.Conn encoded without
// saying its era (transport.Modern's Version empty) needs nothing of its
// params here: not initialize (whose params are kept for a
// re-initialization), and no modern envelope in it (modernOf finds one
// only where its key is).
func plainLegacy(method string, body []byte) bool {
	return method != mcp.MethodInitialize && !bytes.Contains(body, protocolVersionKey)
}

// answerRetries bounds the extra attempts to deliver our answer to a
// server request after a transient failure (see transient); they wait
// 100 ms, 200 ms, 400 ms.
const answerRetries = 3

// deliverAnswer retries the POST of an answer to a server request that
// failed for a transient reason: behind a load balancer another server
// instance may take it (a server instance answers 503 when the one that
// asked is unreachable). If it cannot be delivered, the request on whose
// stream the server asked fails with the reason — its handler on the
// server waits for an answer that will not come.
func (c *Conn) deliverAnswer(ctx context.Context, body []byte, m *jsonrpc.Message, err error) error {
	for i := 0; i < answerRetries && transient(err) && ctx.Err() == nil && c.ctx.Err() == nil; i++ {
		if !c.wait(c.ctx, 100*time.Millisecond<<i) {
			break
		}
		err = c.post(ctx, body, m, false, nil, nil)
	}
	c.mu.Lock()
	origin, ok := c.origins[m.ID]
	delete(c.origins, m.ID)
	c.mu.Unlock()
	var nf *notFoundError
	if err != nil && ok && !errors.As(err, &nf) && c.ctx.Err() == nil {
		c.failRequest(origin, fmt.Errorf("the answer to the server's request %s could not be delivered: %w", m.ID, err))
	}
	return err
}

// transient reports whether a failed POST may succeed if sent again:
// whatever permanent does not rule out (5xx, 408, 409, 425, 429, a broken
// connection), except a lost session and our own end.
func transient(err error) bool {
	if err == nil || errors.Is(err, transport.ErrClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var nf *notFoundError
	return !errors.As(err, &nf) && !permanent(err)
}

// noteOrigin records that server request id arrived on the stream of our
// request origin.
func (c *Conn) noteOrigin(id, origin mcp.ID) {
	c.mu.Lock()
	if c.origins == nil {
		c.origins = make(map[mcp.ID]mcp.ID)
	}
	c.origins[id] = origin
	c.mu.Unlock()
}

// dropOrigins forgets the server requests that arrived on the stream of
// our request origin, once that stream is over.
func (c *Conn) dropOrigins(origin mcp.ID) {
	c.mu.Lock()
	for id, o := range c.origins {
		if o == origin {
			delete(c.origins, id)
		}
	}
	c.mu.Unlock()
}

// The Accept header of a POST.
const acceptPOST = contentJSON + ", " + contentSSE

// The canonical forms of the header names set straight into a request's
// http.Header (http.CanonicalHeaderKey; TestCanonicalHeaderNames).
const (
	canonicalSessionID       = "Mcp-Session-Id"
	canonicalProtocolVersion = "Mcp-Protocol-Version"
)

// Header values every request shares: net/http never changes the values
// of a request's headers, and a slice whose length is its capacity is
// never appended to in place (an Add makes a new one).
var (
	valueJSON       = []string{contentJSON}
	valueAcceptPOST = []string{acceptPOST}
	versionValues   = map[string][]string{}
)

// post sends one message and handles the answer (see Write). It returns
// *notFoundError for a 404 to a request that carried a session id. mr is
// the modern envelope of a 2026-07-28 request (nil for legacy traffic):
// such a request goes without session headers, with the request metadata
// headers, and the end of ctx cancels it for as long as its stream is
// read. hs are the message's own headers (transport.Message.Header).
func (c *Conn) post(ctx context.Context, body []byte, m *jsonrpc.Message, isInit bool, mr *modernRequest, hs []transport.Header) error {
	reqCtx, cancel := context.WithCancelCause(c.ctx)
	stop := neverStops
	if ctx.Done() != nil { // a context that cannot end needs no watch
		stop = context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	}
	detached, tracked := false, false
	defer func() {
		if !detached {
			stop()
			cancel(nil)
			if tracked {
				c.untrackModern(m.ID)
			}
		}
	}()
	req, session, err := c.newRequest(reqCtx, http.MethodPost, body, acceptPOST, !isInit && mr == nil)
	if err != nil {
		return err
	}
	// A legacy request without a session is cancelled as a modern one
	// is, by closing its stream: a session-less server cannot tie a
	// notifications/cancelled POSTed apart to it (docs/design/streamable-http.md).
	sessionless := mr == nil && !isInit && session == "" && m.IsRequest()
	if mr != nil || sessionless {
		c.trackModern(m.ID, cancel)
		tracked = true
	}
	if mr != nil {
		c.setModernHeaders(req, m, mr)
	}
	addMessageHeaders(req, hs)
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.requestError(ctx, "POST", err)
	}
	read := false // the body was read to its end: nothing to drain
	defer func() {
		switch {
		case detached:
		case read:
			_ = resp.Body.Close()
		default:
			drainClose(resp.Body)
		}
	}()
	if resp.StatusCode == http.StatusNotFound && session != "" {
		return &notFoundError{session: session}
	}
	if resp.StatusCode/100 != 2 {
		return c.statusError(ctx, resp, m)
	}
	if isInit {
		if sid := resp.Header.Get(headerSessionID); sid != "" {
			c.mu.Lock()
			c.session = sid
			c.mu.Unlock()
		}
	}
	if !m.IsRequest() {
		return nil
	}
	ct := mediaType(resp.Header)
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		// Not what the spec asks for a request; the response can then
		// only come on another stream.
		c.log.Debug("streamable: request answered without a body", "status", resp.Status, "id", m.ID.String())
		return nil
	case ct == contentJSON:
		read, err = c.answerJSON(ctx, resp, m, isInit)
		return err
	case ct == contentSSE:
		var ms *modernStream
		if tracked {
			// The end of ctx keeps cancelling the request while its
			// stream is read: in 2026-07-28 closing the stream is how a
			// client cancels a request (subscriptions/listen included),
			// and a session-less server has no other way to hear it.
			ms = &modernStream{call: ctx, req: reqCtx, stop: stop, legacy: mr == nil}
		} else if !stop() {
			// ctx ended just now and cancelled the request.
			return c.requestError(ctx, "POST", context.Cause(ctx))
		}
		if !c.goTracked(func() { c.postStream(resp.Body, cancel, m.ID, isInit, ms) }) {
			return transport.ErrClosed
		}
		detached = true
		return nil
	default:
		return fmt.Errorf("streamable: the answer to %s has Content-Type %q, want %s or %s", m.Method, ct, contentJSON, contentSSE)
	}
}

// answerJSON reads a JSON answer to request m and queues it; read reports
// whether the body was read to its end.
func (c *Conn) answerJSON(ctx context.Context, resp *http.Response, m *jsonrpc.Message, isInit bool) (read bool, err error) {
	data, err := readCapped(resp.Body, resp.ContentLength, c.opts.MaxEventBytes)
	if err != nil {
		return false, c.requestError(ctx, "POST", err)
	}
	// Delivered at once only when every message queued before it has
	// been dealt with: a notification that came first on another stream
	// (a list change before the answer) keeps its place.
	if d := c.responder.Load(); d != nil && !isInit && c.unread.Load() == 0 && (*d)(data) {
		return true, nil // decoded once, and its call has it
	}
	in, derr := wire.DecodeOwned(data, inLimits(c.opts.MaxEventBytes)) // data is only read from now on
	if derr != nil {
		return true, fmt.Errorf("streamable: the JSON answer to %s is not a JSON-RPC message: %w", m.Method, derr)
	}
	if in.IsResponse() && !in.ID.IsValid() {
		return true, fmt.Errorf("streamable: the server answered %s with an error: %w", m.Method, in.Error)
	}
	if isInit && in.ID == m.ID {
		c.noteInitResult(in)
	}
	return true, c.enqueue(ctx, data)
}

// noteInitResult takes the negotiated revision from the initialize
// result.
func (c *Conn) noteInitResult(m *jsonrpc.Message) {
	if m.Result == nil {
		return
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(m.Result, &r) != nil || r.ProtocolVersion == "" {
		return
	}
	c.mu.Lock()
	c.version = r.ProtocolVersion
	c.mu.Unlock()
}

// enqueue hands one message to Read.
func (c *Conn) enqueue(ctx context.Context, msg []byte) error {
	return c.enqueueIn(ctx, inbound{data: msg})
}

// enqueueIn hands one message, or the error that stands for it, to Read.
func (c *Conn) enqueueIn(ctx context.Context, in inbound) error {
	c.unread.Add(1)
	select {
	case c.queue <- in:
		return nil
	case <-c.ctx.Done():
		c.unread.Add(-1)
		return transport.ErrClosed
	case <-ctx.Done():
		c.unread.Add(-1)
		return ctx.Err()
	}
}

// goTracked runs f on a goroutine that Close waits for; false after
// Close.
func (c *Conn) goTracked(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// retryDelay is the delay before reconnecting: the server's retry: value,
// else the default, never under MinRetry.
func (c *Conn) retryDelay(retry time.Duration, set bool) time.Duration {
	if !set {
		return max(c.defaultRetry, MinRetry)
	}
	return max(retry, MinRetry)
}

// neverStops is the stop function of a watch that was never set up: the
// context it would have watched cannot end, so it never fired.
func neverStops() bool { return true }
