package streamhttp

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// DefaultCloseTimeout bounds Handler.Close: the grace open
// subscriptions/listen requests get to answer (1 s), then the time
// handlers get to return once cancelled (jsonrpc.DefaultShutdownTimeout).
const DefaultCloseTimeout = seam.ListenGrace + jsonrpc.DefaultShutdownTimeout

// Shutdown stops the handler and ends every session, all at once: it
// refuses new sessions (503), forgets every session (their later
// requests get 404), answers each request still in flight with a
// -32603 error (see endSession), cancels handlers (session-less ones
// with cause ErrServerClosing, and open subscriptions/listen requests
// answer with their result) and stops the idle sweeper. It then waits
// until every session has closed — its handlers returned, what it holds
// freed — or until ctx ends, and returns ctx.Err() in that case.
//
// A handler that ignores cancellation may outlive Shutdown: its session
// keeps one goroutine, which ends when the handler returns; the late
// result is dropped (and logged). Nothing else of the handler is left
// once Shutdown returns nil. Shutdown neither closes HTTP connections nor
// the Broker: call http.Server.Shutdown after it. It may be called again,
// to wait again.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	first := !h.closed
	if first {
		h.closed = true
		close(h.done)
		h.stopAll(server.ErrServerClosing)
		h.workers.Close()
		h.clusterDone = make(chan struct{})
	}
	sessions := make([]*httpSession, 0, len(h.sessions))
	for _, hs := range h.sessions {
		sessions = append(sessions, hs)
	}
	sweeping, sweepDone, clusterDone := h.sweeping, h.sweepDone, h.clusterDone
	h.mu.Unlock()
	if first {
		h.inflight.close()
		go func() { // owned by h: the cluster's calls are bounded by StoreTimeout
			defer close(clusterDone)
			if h.cluster != nil {
				h.cluster.close()
			}
		}()
	}
	// Idle sessions close inline, each with one EventStore purge (bounded
	// by StoreTimeout): a slow store must not hold Shutdown past ctx.
	ended := make(chan struct{})
	go func() { // owned by Shutdown: ends once every session has begun closing
		defer close(ended)
		for _, hs := range sessions {
			h.endSession(hs)
		}
	}()
	select {
	case <-ended:
	case <-ctx.Done():
		return ctx.Err()
	}
	h.mu.Lock()
	waits := make([]<-chan struct{}, 0, len(h.ending)+2)
	for _, done := range h.ending {
		waits = append(waits, done)
	}
	h.mu.Unlock()
	waits = append(waits, h.shutdownLegacySSE()...)
	waits = append(waits, clusterDone)
	if sweeping {
		waits = append(waits, sweepDone)
	}
	for _, done := range waits {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close is Shutdown bounded by DefaultCloseTimeout: it returns
// context.DeadlineExceeded when handlers that ignore cancellation still
// run by then.
func (h *Handler) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), h.closeTimeout())
	defer cancel()
	return h.Shutdown(ctx)
}

// closeTimeout is DefaultCloseTimeout unless a test set closeAfter.
func (h *Handler) closeTimeout() time.Duration {
	if h.closeAfter > 0 {
		return h.closeAfter
	}
	return DefaultCloseTimeout
}

// endSession ends a session without waiting for its handlers: it is
// forgotten at once (later requests naming it get 404) and closed.
// Closing answers the session's requests in flight with a -32603 error
// (httpSession.Close), cancels its handlers, waits until they have
// returned and frees what the session holds. A session with no handler
// running closes here and now (nothing to wait for); otherwise it closes
// on a goroutine owned by h, which Shutdown waits for — one goroutine per
// session, so that a handler that ignores cancellation delays only its
// own session. Ending a session twice is harmless.
func (h *Handler) endSession(hs *httpSession) {
	h.mu.Lock()
	if h.sessions[hs.ss.ID()] == hs {
		delete(h.sessions, hs.ss.ID())
		h.released(hs.ss.ID())
	}
	if hs.ending {
		h.mu.Unlock()
		return
	}
	hs.ending = true
	if hs.refuseIfIdle() {
		h.mu.Unlock()
		h.closeSession(hs)
		return
	}
	done := make(chan struct{})
	h.ending[hs] = done
	h.mu.Unlock()
	go func() { // owned by h (h.ending): ends when the session's handlers have returned
		defer func() {
			h.mu.Lock()
			delete(h.ending, hs)
			h.mu.Unlock()
			close(done)
		}()
		h.closeSession(hs)
	}()
}

// closeSession closes an ended session and waits for its handlers.
func (h *Handler) closeSession(hs *httpSession) {
	hs.ss.Close()
	<-hs.quiet()
	hs.ss.Remove()
	// With a SessionStore the session may live on elsewhere: its shared
	// state and events are the stores' to expire.
	if h.store != nil && h.opts.SessionStore == nil {
		ctx, cancel := context.WithTimeout(context.Background(), h.opts.StoreTimeout)
		_ = h.store.Purge(ctx, hs.ss.ID())
		cancel()
	}
}

// endedError is the answer of a request in flight when its session ends:
// -32603, since the request did not complete and the JSON-RPC range
// -32000..-32099 is not the server's to use (MCP reserves -32020..-32099
// and retires -32000..-32019). The HTTP status is 200, as for any other
// error answer: the answer may already be an event stream.
func (h *Handler) endedError(id mcp.ID) []byte {
	msg := "Internal error: the session ended before the request completed"
	if h.closing.Err() != nil {
		msg = "Internal error: the server is shutting down"
	}
	return wire.EncodeError(id, jsonrpc.NewError(mcp.CodeInternalError, msg))
}

// startSweeper starts the idle-session sweeper once. Called with mu held.
func (h *Handler) startSweeper() {
	if h.sweeping || h.opts.SessionTTL < 0 {
		return
	}
	h.sweeping = true
	h.sweepDone = make(chan struct{})
	go h.sweep() // owned by h: ends at Shutdown
}

func (h *Handler) sweep() {
	defer close(h.sweepDone)
	interval := min(max(h.opts.SessionTTL/4, 10*time.Millisecond), time.Minute)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-t.C:
			h.sweepOnce()
		}
	}
}

// sweepOnce ends the sessions idle for longer than the TTL by h.now. It
// does not wait for them to close (endSession).
func (h *Handler) sweepOnce() {
	cutoff := h.now().Add(-h.opts.SessionTTL).UnixNano()
	h.mu.Lock()
	var idle []*httpSession
	for _, hs := range h.sessions {
		if hs.idle(cutoff) {
			idle = append(idle, hs)
		}
	}
	h.mu.Unlock()
	for _, hs := range idle {
		select {
		case <-h.done: // Shutdown ends the rest, concurrently and within its ctx
			return
		default:
		}
		h.log.Debug("streamhttp: closing idle session", "session", hs.ss.ID())
		h.endSession(hs)
	}
}

// answerInitialize answers the initialize that opened hs. initialize runs
// no user code, so its answer is awaited before anything is written: a
// session id goes with an InitializeResult only (lifecycle). An
// initialize that failed — bad params, or a SessionStore that did not
// take the session (503) — or whose client left drops its session at once
// and is answered without an id.
func (h *Handler) answerInitialize(w http.ResponseWriter, r *http.Request, hs *httpSession, st *stream) {
	st.awaitFinal(r.Context().Done())
	if !hs.ss.Initializing() {
		w.Header().Set(headerSessionID, hs.ss.ID())
		st.serve(w, r, -1)
		return
	}
	h.endSession(hs)
	if msg, status, ok := st.takeFinal(); ok {
		(&sseWriter{w: w}).json(msg, status)
	}
}
