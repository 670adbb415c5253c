package streamhttp

import (
	"context"
	"errors"
	"net/http"
	"runtime/debug"
	"sync"

	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// postModern serves one 2026-07-28 POST: no session, the envelope and
// the SEP-2243 headers checked first, in the order the conformance suite
// expects, with the HTTP status the spec gives each error.
func (h *Handler) postModern(w http.ResponseWriter, r *http.Request, call *seam.Call) {
	msg := call.Msg
	if !msg.IsRequest() {
		// 2026 defines no core client notification over HTTP
		// (cancellation is closing the stream) and clients send no
		// responses: accept; an extension's notification goes to its
		// handler.
		if msg.IsNotification() {
			h.p.ServeNotification(r.Context(), *call)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	fail := func(status int, e *jsonrpc.Error) { writeRPCError(w, status, msg.ID, e) }
	header := headerValue(r.Header, headerProtocolVersion)
	switch {
	case !call.Claimed && call.Err == nil:
		fail(http.StatusBadRequest, jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: a 2026-07-28 request needs _meta with io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities"))
		return
	case header == "":
		fail(http.StatusBadRequest, seam.HeaderMismatch("the MCP-Protocol-Version header is missing"))
		return
	case call.Version != "" && header != call.Version:
		fail(http.StatusBadRequest, seam.HeaderMismatch("MCP-Protocol-Version header value '%s' does not match body value '%s'", header, call.Version))
		return
	case call.Err != nil:
		fail(http.StatusBadRequest, call.Err)
		return
	}
	if e := checkStandardHeaders(r.Header, msg.Method, call); e != nil {
		fail(http.StatusBadRequest, e)
		return
	}
	is := h.newInlineServe(w, r, msg.ID, true)
	st := is.st
	// The client closing the stream is the cancellation of a 2026
	// request (nothing more may be sent for it).
	h.serveRequest(is, func(ctx context.Context) {
		// A handler panic is answered by the server's intercept.Recover.
		result, err := h.p.ServeModern(ctx, *call, streamOutbound{st}, r.Header)
		if closing := shutdownAnswer(ctx, result, err); closing != nil {
			result, err = nil, closing
		}
		if err != nil {
			e := seam.ToRPCError(err)
			st.pushFinal(wire.EncodeError(msg.ID, e), statusOf(err, h.p.ModernStatus(e)))
			return
		}
		out, err := wire.EncodeResult(msg.ID, result)
		if err != nil {
			out = wire.EncodeError(msg.ID, jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the result could not be encoded"))
		}
		st.push(out, true)
	})
}

// serveRequest runs one session-less request's handler (run, which ends
// by pushing the final message on is.st) and serves is.st as the POST's
// answer. run's context ends once the answer is out or the client has
// gone (context.Canceled), or at Shutdown (server.ErrServerClosing): the
// request is in h.inflight meanwhile. With AlwaysSSE the handler runs on
// its own goroutine. Otherwise a JSON answer needs no second goroutine:
// the handler runs on the POST's, and the stream is served from another
// goroutine only once it has to write before the handler returns (a
// message before the result, a request to close, or SSEAfter of
// silence, which h.inflight's watcher notices).
func (h *Handler) serveRequest(is *inlineServe, run func(ctx context.Context)) {
	w, r, st, ctx := is.w, is.r, is.st, &is.ctx
	defer is.done()
	if h.opts.AlwaysSSE {
		is.flight.watched = true // never silent: served from the start
		h.inflight.join(&is.flight)
		defer h.inflight.leave(&is.flight)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // owned by this POST: waited for below
			defer wg.Done()
			h.runGuarded(is, run)
		}()
		st.serve(w, r, -1)
		ctx.cancel(context.Canceled)
		wg.Wait()
		return
	}
	st.onActivity = is.startReader
	h.inflight.join(&is.flight)
	defer h.inflight.leave(&is.flight)
	h.runGuarded(is, run)
	if is.claim() {
		st.serve(w, r, -1)
	} else {
		<-is.served
	}
	ctx.release()
}

// runGuarded runs a request's run. A panic there (a handler's panics are
// answered inside the server; this is what comes after, such as a result
// that panics while it is encoded) is logged and answered -32603, so
// that the stream still gets its final message and its reader ends, as
// it would for an error.
func (h *Handler) runGuarded(is *inlineServe, run func(ctx context.Context)) {
	defer func() {
		if p := recover(); p != nil {
			h.log.Error("streamhttp: panic while answering a request", "panic", p, "stack", string(debug.Stack()))
			e := jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the answer could not be made")
			status := 0
			if is.modern {
				status = h.p.ModernStatus(e)
			}
			is.st.pushFinal(wire.EncodeError(is.st.reqID, e), status)
		}
	}()
	run(&is.ctx)
}

// inlineServe is the state of a request whose handler runs on the POST's
// goroutine: who serves its stream, the POST itself or a reader started
// when the handler first has to write.
type inlineServe struct {
	w       http.ResponseWriter
	r       *http.Request
	st      *stream
	ctx     lazyCtx // the handler's
	mu      sync.Mutex
	started bool
	served  chan struct{} // closed when the reader is done; set by startReader

	flight flight // its place in h.inflight
	modern bool   // a 2026-07-28 request (the HTTP status of an error)

	stStore stream // st's storage: one allocation for the request
}

// newInlineServe returns the state of a session-less request answering
// request id, its stream included.
func (h *Handler) newInlineServe(w http.ResponseWriter, r *http.Request, id mcp.ID, modern bool) *inlineServe {
	is := &inlineServe{w: w, r: r, modern: modern}
	is.st = &is.stStore
	initStream(is.st, h, nil, id)
	is.ctx.parent = r.Context()
	is.flight.owner = is
	return is
}

// claim reports whether the caller is the one to serve the stream.
func (is *inlineServe) claim() bool {
	is.mu.Lock()
	defer is.mu.Unlock()
	if is.started {
		return false
	}
	is.started = true
	return true
}

// startReader serves the stream from a new goroutine, once.
func (is *inlineServe) startReader() {
	is.mu.Lock()
	if is.started {
		is.mu.Unlock()
		return
	}
	is.started = true
	is.served = make(chan struct{})
	w, r := is.w, is.r
	is.mu.Unlock()
	go func() { // owned by the POST, which waits for served
		defer close(is.served)
		is.st.serve(w, r, -1)
		is.ctx.cancel(context.Canceled) // the client went away, or the answer is out
	}()
}

// silent turns the stream into SSE after SSEAfter without a message.
func (is *inlineServe) silent() {
	is.st.mu.Lock()
	if n := len(is.st.pending); n == 0 || !is.st.pending[n-1].final {
		is.st.upgrade()
	}
	is.st.mu.Unlock()
	is.startReader()
}

// cancelClosing ends the handler's context at Shutdown.
func (is *inlineServe) cancelClosing() { is.ctx.cancel(server.ErrServerClosing) }

// done ends the request's inline state, on every way out of serveRequest
// (a panic included): the watcher, which may still hold it, finds it
// claimed and starts no reader, and the response writer and request are
// let go (a context kept after the request, by a task, pins this struct).
func (is *inlineServe) done() {
	is.mu.Lock()
	is.started = true
	is.w, is.r = nil, nil
	is.mu.Unlock()
}

// shutdownAnswer is the error that answers a session-less request whose
// handler Shutdown cancelled (cause server.ErrServerClosing) and that
// then failed, as a protocol error or as a tool result with isError: the
// failure is the shutdown's, not the handler's ("context canceled" as a
// tool result would read as the tool's own failure), and a legacy
// session's requests in flight get the same -32603 (endedError). A
// handler that completed despite the cancellation keeps its result. Nil
// when the request was not ended by Shutdown.
func shutdownAnswer(ctx context.Context, result any, err error) error {
	if !errors.Is(context.Cause(ctx), server.ErrServerClosing) {
		return nil
	}
	if tr, ok := result.(*mcp.CallToolResult); err == nil && (!ok || !tr.IsError) {
		return nil
	}
	return jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the server is shutting down")
}
