package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/rpccodec"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// Handler answers what the peer sends on a Conn.
type Handler interface {
	// HandleRequest answers one request. It runs on its own goroutine, at
	// most ConnOptions.MaxInFlight at once. ctx ends when the peer cancels
	// the request (notifications/cancelled) or the connection closes.
	// ping and initialize are the exceptions: they are answered on the
	// goroutine that read them, without an in-flight slot, before the
	// next message is read, so HandleRequest must answer them at once. A
	// ping is the peer's liveness check: it gets through when every slot
	// is busy. The requests that follow initialize see it done (a client
	// may write initialize and its first requests at once, into a pipe).
	// The result is marshaled to JSON (a jsontext.Value is sent verbatim).
	// An error that is or wraps an *Error is sent as that error; any other
	// error becomes mcp.CodeInternalError. A panic is recovered and answered
	// with mcp.CodeInternalError. After a peer cancellation no answer is sent.
	HandleRequest(ctx context.Context, req *Message) (any, error)

	// HandleNotification handles one notification. It runs on the
	// connection's reader goroutine, in arrival order, so it must not
	// block: in particular it must not wait for a response on this Conn.
	// notifications/cancelled is handled by the Conn itself and is not
	// passed on.
	HandleNotification(ctx context.Context, n *Message)
}

// ConnOptions configures a Conn. The zero value is usable.
type ConnOptions struct {
	// Handler answers the peer's requests and notifications. Nil answers
	// every request with mcp.CodeMethodNotFound and drops notifications.
	Handler Handler
	// Limits bound each incoming message.
	Limits Limits
	// MaxInFlight bounds the peer's requests handled at once. Default
	// DefaultMaxInFlight. Pings and initialize take no slot (see Handler).
	MaxInFlight int
	// MaxQueued bounds the peer's requests that wait, in arrival order,
	// for a free slot while the Conn goes on reading: so that responses to
	// this side's calls, cancellations and pings are read while every
	// slot is busy. Once MaxQueued requests wait too, reading (or Process)
	// pauses until one starts. Default DefaultMaxQueued; negative: none
	// wait, reading pauses as soon as every slot is busy.
	MaxQueued int
	// CallTimeout is the deadline applied to Call when its context has
	// none. Zero means no deadline beyond the caller's context.
	CallTimeout time.Duration
	// ShutdownTimeout bounds how long Close (and Wait) waits for running
	// handlers after cancelling them, and for the reader goroutine when
	// the transport cannot interrupt its Read (standard input).
	// Default DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// DrainTimeout bounds the end of input. When the peer ends its stream
	// (Read returns io.EOF: on stdio, the client closed standard input to
	// shut the server down) the Conn reads no more but lets the requests it
	// has already read finish, queued ones included, and writes their
	// answers; this side's calls pending then fail at once (no answer can
	// come). Requests still unanswered after DrainTimeout are answered
	// with an error (mcp.CodeInternalError), logged, and their handlers
	// cancelled; then the Conn ends with io.EOF. Default
	// DefaultDrainTimeout; negative: end at once, answering nothing more.
	DrainTimeout time.Duration
	// InputEnded, when set, is called once on the reader goroutine when
	// the peer ends its stream, before the drain: a server ends its
	// long-lived requests there so that they answer at once. It must not
	// block.
	InputEnded func()
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
	// Observe, when set, sees every message read (in=true) and written
	// (in=false), before decoding and after encoding. Tests use it to
	// validate the wire; it must neither retain nor modify msg.
	Observe func(in bool, msg []byte)
	// IDPrefix, when set, makes the ids of outgoing requests strings:
	// IDPrefix followed by a decimal counter. Several processes that serve
	// one peer (server instances sharing a session) tell whose request an
	// answer belongs to by it. Empty: the ids are integers.
	IDPrefix string
	// Go starts the goroutine of each handler (of the peer's requests).
	// Nil: a new goroutine each (the go statement). A server passes a
	// pool of warm goroutines (internal/workers) so that a handler does
	// not grow a fresh stack each time. It must not block, and must run
	// fn exactly once.
	Go func(fn func())
}

const (
	// DefaultMaxInFlight is the default bound on concurrent peer requests.
	DefaultMaxInFlight = 64
	// DefaultMaxQueued is the default bound on peer requests waiting for
	// a slot.
	DefaultMaxQueued = 64
	// DefaultShutdownTimeout is how long Close waits for handlers by default.
	DefaultShutdownTimeout = 5 * time.Second
	// DefaultDrainTimeout is how long, by default, the requests read
	// before the peer's end of input may run on: less than the 5 seconds
	// transport/command gives a server to exit after closing its standard
	// input, so that a server whose handlers honour cancellation exits
	// before it is sent SIGTERM.
	DefaultDrainTimeout = 3 * time.Second
	// MethodCancelled is the MCP notification that cancels a request.
	MethodCancelled = "notifications/cancelled"
	// methodInitialize may not be cancelled (MCP lifecycle rule).
	methodInitialize = "initialize"
	// methodPing is answered inline (see Handler).
	methodPing = "ping"
)

// ErrClosed is returned by Call and Notify once the Conn is closed; the
// cause of the closure is available from Conn.Err.
var ErrClosed = errors.New("jsonrpc: connection closed")

// errInputEnded fails this side's calls once the peer has ended its
// input: no response can arrive.
var errInputEnded = fmt.Errorf("%w: the peer ended its input: %w", ErrClosed, io.EOF)

// errPeerCancelled is the cancellation cause of a handler context whose
// request the peer cancelled.
var errPeerCancelled = errors.New("jsonrpc: request cancelled by the peer")

// Conn is one JSON-RPC 2.0 peer over a transport.Conn: it issues calls and
// matches their responses, and dispatches the peer's requests and
// notifications to a Handler. Many calls may be in flight in both
// directions. All methods are safe for concurrent use.
type Conn struct {
	t    transport.Conn
	opts ConnOptions
	log  *slog.Logger

	base       context.Context // parent of every handler context
	cancelBase context.CancelFunc

	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[mcp.ID]chan *Message // this side's calls awaiting an answer; nil until the first
	// inbound holds the peer's requests admitted and not yet answered
	// (running or queued); nil until the first. Whoever removes an entry
	// owns the answer: the handler's goroutine, or the drain when it
	// gives up (see abandon).
	inbound map[mcp.ID]context.CancelCauseFunc
	err     error         // why the Conn ended; set once
	running int           // handlers holding a slot (≤ MaxInFlight)
	queue   []queued      // requests waiting for a slot (≤ MaxQueued)
	room    chan struct{} // closed when a slot or queue place frees; nil if nobody waits
	ended   bool          // the peer ended its input (see DrainTimeout)

	handlers  sync.WaitGroup
	answering sync.WaitGroup // answers owned by a handler, not yet written
	reader    chan struct{}  // closed when the reader goroutine exits; nil if never started
	eof       chan struct{}  // closed when the peer ends its input
	done      chan struct{}  // closed when the Conn ends
	startOnce sync.Once
	endOnce   sync.Once
}

// NewConn returns a Conn over t. Call Start to begin reading.
func NewConn(t transport.Conn, o *ConnOptions) *Conn {
	var opts ConnOptions
	if o != nil {
		opts = *o
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.MaxQueued == 0 {
		opts.MaxQueued = DefaultMaxQueued
	} else if opts.MaxQueued < 0 {
		opts.MaxQueued = 0
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.DrainTimeout == 0 {
		opts.DrainTimeout = DefaultDrainTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	base, cancel := context.WithCancel(context.Background())
	return &Conn{
		t:          t,
		opts:       opts,
		log:        log,
		base:       base,
		cancelBase: cancel,
		eof:        make(chan struct{}),
		done:       make(chan struct{}),
	}
}

// Start begins reading messages on a goroutine owned by the Conn; it ends
// when the transport ends or Close is called. Start is idempotent.
func (c *Conn) Start() {
	c.startOnce.Do(func() {
		c.reader = make(chan struct{}) // made here: a Conn fed by Process never has one
		if r, ok := c.t.(Responder); ok {
			r.SetResponder(c.deliverDirect)
		}
		go c.readLoop()
	})
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err reports why the connection ended: io.EOF when the peer closed the
// stream, ErrClosed after Close, or the transport's error. It is nil
// while the connection is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// CallOptions say what the transport needs to know about a request or
// notification beyond its bytes (see transport.Message). The zero value
// is a message of its own, with no headers.
type CallOptions struct {
	// Related is the id of the peer request the message is sent on behalf
	// of: a server's progress, log messages and requests to the client
	// while it handles a request. A multi-stream transport (the Streamable
	// HTTP server) puts the message on that request's stream. When zero,
	// and ctx is (derived from) the context of a handler of this Conn, the
	// message relates to the request that handler answers.
	Related mcp.ID
	// Header lists headers the transport sends with the message
	// (transport.Message.Header): the client's SEP-2243 Mcp-Param-*
	// headers. It must not be modified while the call runs. A cancellation
	// the call sends does not carry them.
	Header []transport.Header
	// Local marks the message as one every instance of a deployment
	// sends itself (transport.Message.Local).
	Local bool
	// Modern describes a 2026-07-28 request to the transport
	// (transport.Message.Modern): the client sets it when it built the
	// envelope. A cancellation the call sends does not carry it.
	Modern transport.Modern
	// Sent, when set, is called with the request's id just before the
	// request is written, so the caller learns the id before the peer
	// can answer or send anything that names it (the client's
	// subscriptions/listen: the id is the subscription id). It runs on
	// the calling goroutine, once per call that writes, and not for a
	// call whose context ended before the write. Notifications and the
	// cancellation a call sends ignore it.
	Sent func(id mcp.ID)
}

// Call sends a request and waits for its response, decoding the result
// into result (a pointer, or nil to discard it; *jsontext.Value receives
// the raw JSON). A JSON-RPC error from the peer is returned as *Error.
// When ctx ends first, Call sends notifications/cancelled for the request
// (except for initialize, which may not be cancelled) and returns ctx's
// error; a late response is dropped. That holds too when ctx ends while
// the request is being written (an HTTP POST whose answer's headers have
// not come): the peer may have it, and a write cut short is not a
// cancellation in 2025-11-25. A ctx that has ended before Call writes
// nothing. Call is CallWith with zero options.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	return c.CallWith(ctx, method, params, result, CallOptions{})
}

// CallWith is Call for a request that relates to a peer request or
// carries headers (see CallOptions). The cancellation it sends when ctx
// ends first relates to the same peer request.
func (c *Conn) CallWith(ctx context.Context, method string, params, result any, opts CallOptions) error {
	if c.opts.CallTimeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.opts.CallTimeout)
			defer cancel()
		}
	}
	id := c.newID()
	msg, err := encodeRequest(id, method, params)
	if err != nil {
		return fmt.Errorf("jsonrpc: encoding %s params: %w", method, err)
	}
	ch := make(chan *Message, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.closedErr()
	}
	if c.ended {
		c.mu.Unlock()
		return errInputEnded
	}
	if c.pending == nil {
		c.pending = make(map[mcp.ID]chan *Message) // on the first call: a Conn that makes none holds none
	}
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	related := c.related(ctx, opts.Related)
	route := opts.Modern
	route.ID, route.Method = id, method // what the carrier would otherwise decode msg for
	if err := ctx.Err(); err != nil {
		return err // nothing was written: there is nothing to cancel
	}
	if opts.Sent != nil {
		opts.Sent(id)
	}
	// msg is this call's own (encodeRequest's fresh bytes), handed over.
	if err := c.write(ctx, transport.Message{Data: msg, Owned: true, Related: related, Header: opts.Header, Local: opts.Local, Modern: route}); err != nil {
		// The write began, so the request may have reached the peer: an
		// HTTP POST aborted before the answer's headers has usually been
		// read by the server already. In 2025-11-25 a dropped request is
		// not a cancellation, so when the call's context ended it says so
		// (a modern request's carrier closes its stream instead and does
		// not send the notification; see sendCancel).
		if ctx.Err() != nil && method != methodInitialize && !errors.Is(err, ErrClosed) {
			c.sendCancel(related, id, context.Cause(ctx))
		}
		return err
	}
	select {
	case resp := <-ch:
		return answer(resp, result)
	case <-ctx.Done():
		if method != methodInitialize {
			c.sendCancel(related, id, context.Cause(ctx))
		}
		return ctx.Err()
	case <-c.eof:
		// No response can come after the peer's end of input; one read
		// before it is waiting here.
		select {
		case resp := <-ch:
			return answer(resp, result)
		default:
		}
		return errInputEnded
	case <-c.done:
		// The reader delivers a response before it ends the connection,
		// so a response that arrived just before the end is waiting here.
		select {
		case resp := <-ch:
			return answer(resp, result)
		default:
		}
		return c.closedErr()
	}
}

// newID returns the id of a new outgoing request.
func (c *Conn) newID() mcp.ID {
	n := c.nextID.Add(1)
	if c.opts.IDPrefix == "" {
		return mcp.IntID(n)
	}
	return mcp.StringID(c.opts.IDPrefix + strconv.FormatInt(n, 10))
}

// answer returns what Call returns for resp.
func answer(resp *Message, result any) error {
	if resp.local != nil {
		return resp.local
	}
	if resp.Error != nil {
		return resp.Error
	}
	return decodeResult(resp.Result, result)
}

func decodeResult(raw jsontext.Value, result any) error {
	switch r := result.(type) {
	case nil:
		return nil
	case *jsontext.Value:
		*r = raw
		return nil
	case *mcp.CallToolResult:
		if rpccodec.DecodeToolResult(raw, r, nil) {
			return nil // the everyday result, without the struct decoder
		}
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("jsonrpc: decoding result: %w", err)
	}
	return nil
}

// sendCancel tells the peer that call id is abandoned. The notification
// relates to the peer request the call related to, so on a multi-stream
// transport it follows the request it cancels.
func (c *Conn) sendCancel(related, id mcp.ID, cause error) {
	params := struct {
		RequestID mcp.ID `json:"requestId"`
		Reason    string `json:"reason,omitzero"`
	}{RequestID: id}
	if cause != nil {
		params.Reason = cause.Error()
	}
	msg, err := encodeRequest(mcp.ID{}, MethodCancelled, params)
	if err != nil {
		return
	}
	// Best effort, bounded: the caller has already given up.
	ctx, cancel := context.WithTimeout(c.base, time.Second)
	defer cancel()
	_ = c.write(ctx, transport.Message{Data: msg, Related: related})
}

// Outstanding reports how many of this side's calls await a response.
func (c *Conn) Outstanding() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// Notify sends a notification. It is NotifyWith with zero options.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	return c.NotifyWith(ctx, method, params, CallOptions{})
}

// NotifyWith is Notify for a notification that relates to a peer request
// or carries headers (see CallOptions).
func (c *Conn) NotifyWith(ctx context.Context, method string, params any, opts CallOptions) error {
	msg, err := encodeRequest(mcp.ID{}, method, params)
	if err != nil {
		return fmt.Errorf("jsonrpc: encoding %s params: %w", method, err)
	}
	return c.write(ctx, transport.Message{Data: msg, Related: c.related(ctx, opts.Related), Header: opts.Header, Local: opts.Local})
}

// handlingKey is the context key under which a handler's context holds
// the request it answers (a *Message), for this Conn only: a request sent
// with another Conn's handler context relates to nothing here.
type handlingKey struct{ c *Conn }

// related returns the peer request a message sent with ctx relates to:
// id when valid, otherwise the request whose handler's context ctx is,
// if any. Session-level sends made inside a handler (a server's
// Session.Ping, its notifications) have only ctx to say where they belong.
func (c *Conn) related(ctx context.Context, id mcp.ID) mcp.ID {
	if id.IsValid() {
		return id
	}
	if m, ok := ctx.Value(handlingKey{c}).(*Message); ok {
		return m.ID
	}
	return mcp.ID{}
}

// handling returns the context of the handler of req: ctx, knowing req.
func (c *Conn) handling(ctx context.Context, req *Message) context.Context {
	return context.WithValue(ctx, handlingKey{c}, req)
}

// write hands one message to the transport; msg says where it belongs.
func (c *Conn) write(ctx context.Context, msg transport.Message) error {
	select {
	case <-c.done:
		return c.closedErr()
	default:
	}
	if c.opts.Observe != nil {
		c.opts.Observe(false, msg.Data)
	}
	if err := c.t.Write(ctx, msg); err != nil {
		if errors.Is(err, transport.ErrClosed) {
			return c.closedErr()
		}
		return err
	}
	return nil
}

func (c *Conn) closedErr() error {
	if err := c.Err(); err != nil && !errors.Is(err, ErrClosed) {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return ErrClosed
}

// Drain waits, at most timeout, until no handler of the peer's requests
// is running — their answers written — and reports whether that
// happened. It does not stop new requests from arriving; callers use it
// to let answers they provoked (a cancelled subscription's result) go
// out before Close.
func (c *Conn) Drain(timeout time.Duration) bool {
	finished := make(chan struct{})
	go func() { c.handlers.Wait(); close(finished) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-finished:
		return true
	case <-t.C:
		return false
	}
}

// Close ends the connection: it closes the transport, fails every pending
// Call with ErrClosed, cancels every running handler and waits for them
// (at most ShutdownTimeout) and for the reader goroutine. It is
// idempotent and always returns nil.
func (c *Conn) Close() error {
	c.end(ErrClosed)
	_ = c.Wait() // the connection's own error is not Close's
	return nil
}

// Wait blocks until the connection has ended and its goroutines have
// exited. Handlers that ignore cancellation, and a reader blocked in a
// Read that closing the transport cannot interrupt (standard input, which
// stdio.New does not close), are waited for at most ShutdownTimeout in
// all. It returns the cause, as Err.
func (c *Conn) Wait() error {
	<-c.done
	c.startOnce.Do(func() {}) // never started: now it never will be, and has no reader
	t := time.NewTimer(c.opts.ShutdownTimeout)
	defer t.Stop()
	if c.reader != nil {
		select {
		case <-c.reader:
		case <-t.C:
			c.log.Warn("jsonrpc: reader still blocked in Read after shutdown timeout", "timeout", c.opts.ShutdownTimeout)
			return c.Err()
		}
	}
	finished := make(chan struct{})
	go func() { c.handlers.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-t.C:
		c.log.Warn("jsonrpc: handlers still running after shutdown timeout", "timeout", c.opts.ShutdownTimeout)
	}
	return c.Err()
}

// end records the cause and tears the connection down once.
func (c *Conn) end(cause error) {
	c.endOnce.Do(func() {
		c.mu.Lock()
		c.err = cause
		// Queued requests never start; their contexts end with c.base.
		for _, q := range c.queue {
			delete(c.inbound, q.msg.ID)
		}
		c.queue = nil
		c.wakeLocked()
		c.mu.Unlock()
		close(c.done)
		c.cancelBase()
		_ = c.t.Close()
	})
}

func (c *Conn) readLoop() {
	defer close(c.reader)
	for {
		data, err := c.t.Read(c.base)
		if err != nil {
			if errors.Is(err, transport.ErrMessageTooLarge) {
				c.tooLarge(err)
				continue
			}
			if errors.Is(err, transport.ErrClosed) {
				err = ErrClosed
			}
			if errors.Is(err, io.EOF) {
				c.drainInput()
			}
			c.end(err)
			return
		}
		if c.opts.Observe != nil {
			c.opts.Observe(true, data)
		}
		// The transport's slice is the Conn's (transport.Conn.Read):
		// the message may point into it.
		msg, derr := decodeIn(data, c.opts.Limits, true)
		if derr != nil {
			c.rejected(data, msg, derr)
			continue
		}
		if !c.Process(msg) {
			return
		}
	}
}

// Process handles one message from the peer that the caller has already
// decoded: a response completes its Call, a notification is handled at
// once, a ping or initialize is answered at once, a request starts its handler or joins
// the queue (waiting while slots and queue are full). It is
// what the reader goroutine does with each message, and the entry point
// for transports that receive messages themselves, such as an HTTP
// server, where the Conn is never started. It reports false once the
// connection has ended.
func (c *Conn) Process(msg *Message) bool {
	return c.process(c.base, msg)
}

// ProcessContext is Process for a message that arrived with its own
// context — an HTTP request's, carrying what authentication middleware
// put there. A request's handler sees the values of vals (looked up
// before the connection's own), while its cancellation stays the
// connection's and the peer's: vals ending does not cancel the handler.
func (c *Conn) ProcessContext(vals context.Context, msg *Message) bool {
	return c.process(vals, msg)
}

// process handles one decoded message; vals is c.base when the message
// brought no context of its own.
func (c *Conn) process(vals context.Context, msg *Message) bool {
	switch {
	case msg.IsResponse():
		c.deliver(msg)
	case msg.IsNotification():
		c.notification(msg)
	default:
		return c.request(vals, msg)
	}
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

func (c *Conn) deliver(msg *Message) {
	c.mu.Lock()
	ch, ok := c.pending[msg.ID]
	delete(c.pending, msg.ID)
	c.mu.Unlock()
	if !ok {
		c.log.Debug("jsonrpc: response to no pending request", "id", msg.ID.String())
		return
	}
	ch <- msg // buffered, one response per id
}

func (c *Conn) notification(msg *Message) {
	if msg.Method == MethodCancelled {
		var p struct {
			RequestID jsontext.Value `json:"requestId"`
		}
		if json.Unmarshal(msg.Params, &p) != nil || p.RequestID == nil {
			return // invalid cancellations are ignored
		}
		id, err := mcp.ParseID(p.RequestID)
		if err != nil {
			return
		}
		c.mu.Lock()
		cancel := c.inbound[id]
		c.mu.Unlock()
		if cancel != nil {
			cancel(errPeerCancelled)
		}
		return
	}
	if c.opts.Handler != nil {
		c.opts.Handler.HandleNotification(c.base, msg)
	}
}

func (c *Conn) handle(ctx context.Context, msg *Message) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("jsonrpc: handler panic", "method", msg.Method, "panic", p, "stack", string(debug.Stack()))
			result, err = nil, Errorf(mcp.CodeInternalError, "Internal error: handler for %s panicked", msg.Method)
		}
	}()
	if c.opts.Handler == nil {
		return nil, Errorf(mcp.CodeMethodNotFound, "Method not found: %s", msg.Method)
	}
	return c.opts.Handler.HandleRequest(ctx, msg)
}

// toError maps a handler error to the error object sent to the peer.
func toError(err error) *Error {
	if e, ok := AsError(err); ok {
		return e
	}
	return Errorf(mcp.CodeInternalError, "Internal error: %v", err)
}

// IsEOF reports whether err means the peer ended the stream.
func IsEOF(err error) bool { return errors.Is(err, io.EOF) }

// valuesFrom is a context whose deadline, cancellation and error are its
// embedded Context's (the connection's base, which holds no values of its
// own), and whose values are vals'. The embedded Context is asked first:
// it answers only the context package's own lookup of the cancelCtx a
// context derives from, which must find the base's. Were vals asked
// first, a request context derived from this one would find vals'
// cancelCtx (an HTTP request's), see that its Done differs, and watch
// the parent from a goroutine of its own, one per request; and
// context.Cause would report vals' cause.
type valuesFrom struct {
	context.Context
	vals context.Context
}

func (v valuesFrom) Value(key any) any {
	if x := v.Context.Value(key); x != nil {
		return x
	}
	return v.vals.Value(key)
}
