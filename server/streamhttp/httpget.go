package streamhttp

// The GET side of the endpoint: a session's standalone stream, and the
// resumption of a stream (standalone or a POST's) from Last-Event-ID,
// out of this instance's memory or the shared event store.

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	if h.opts.Stateless {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, mcp.ID{}, mcp.CodeInvalidRequest, "Method Not Allowed: this server has no sessions")
		return
	}
	if modernWithoutSession(w, r) {
		return
	}
	if !acceptsEvents(r) {
		writeError(w, http.StatusNotAcceptable, mcp.ID{}, mcp.CodeInvalidRequest, "Not Acceptable: Accept must list text/event-stream")
		return
	}
	hs, ok := h.session(w, r)
	if !ok {
		return
	}
	defer hs.busy.release()
	if last := headerValue(r.Header, headerLastEventID); last != "" {
		h.resume(w, r, hs, last)
		return
	}
	if h.opts.NoStandaloneStream {
		w.Header().Set("Allow", "POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, mcp.ID{}, mcp.CodeInvalidRequest, "Method Not Allowed: no standalone stream")
		return
	}
	h.serveStandalone(w, r, hs)
}

// serveStandalone serves the session's standalone GET stream.
func (h *Handler) serveStandalone(w http.ResponseWriter, r *http.Request, hs *httpSession) {
	st, created := hs.getStream()
	if created && st != nil && h.cluster != nil {
		// The server sends each message on one stream: the instances
		// that held this session's standalone stream drop theirs.
		h.cluster.broadcast(r.Context(), &clusterMsg{Kind: kindStandalone, Session: hs.ss.ID(), Seq: uint64(st.born)})
	}
	if st == nil {
		writeError(w, http.StatusNotFound, mcp.ID{}, mcp.CodeInvalidRequest, "Not Found: unknown or ended session")
		return
	}
	st.mu.Lock()
	st.upgrade()
	st.mu.Unlock()
	st.serve(w, r, -1)
}

// resume serves GET with Last-Event-ID: the events of that event's
// stream after it, then the stream live if it is still open.
func (h *Handler) resume(w http.ResponseWriter, r *http.Request, hs *httpSession, last string) {
	streamID, seq, ok := parseEventID(last)
	if !ok {
		writeError(w, http.StatusBadRequest, mcp.ID{}, mcp.CodeInvalidRequest, "Bad Request: malformed Last-Event-ID")
		return
	}
	if st := hs.streamByID(streamID); st != nil {
		st.serve(w, r, int64(seq))
		return
	}
	if c := h.cluster; c != nil {
		if owner, post := ownerOfStream(streamID); owner != "" && owner != c.id {
			c.resumeRemote(w, r, hs, streamID, seq, owner, post)
			return
		}
	}
	h.replayStored(w, r, hs, streamID, seq)
}

// replayStored answers a resumption of a stream that is not live: the
// events the store still has after seq, then the end of the response;
// 404 when the store knows nothing of the stream in this session (a
// made-up stream id, or another session's), rather than an empty stream
// that would pass for one with nothing left to replay.
func (h *Handler) replayStored(w http.ResponseWriter, r *http.Request, hs *httpSession, streamID string, seq uint64) {
	events, known, ok := h.storedEvents(w, r, hs, streamID, seq)
	switch {
	case !ok:
	case !known:
		writeError(w, http.StatusNotFound, mcp.ID{}, mcp.CodeInvalidRequest, "Not Found: this session has no stream named by Last-Event-ID")
	default:
		h.writeReplay(w, hs, streamID, events)
	}
}

// resumeOrphan answers a resumption of a stream whose instance is gone
// (docs/design/multi-instance.md): the events stored after seq if there
// are any — the client resumes again after them. With none left, the
// standalone stream continues here as this instance's own; a POST's
// stream fails for good with 410, so that the client's call ends with an
// error instead of resuming in vain: its outcome is unknown.
func (h *Handler) resumeOrphan(w http.ResponseWriter, r *http.Request, hs *httpSession, streamID string, seq uint64, post bool) {
	events, _, ok := h.storedEvents(w, r, hs, streamID, seq) // unknown: nothing stored
	switch {
	case !ok:
	case len(events) > 0:
		h.writeReplay(w, hs, streamID, events)
	case !post:
		h.serveStandalone(w, r, hs)
	default:
		writeError(w, http.StatusGone, mcp.ID{}, mcp.CodeInternalError, "Gone: the server instance answering this request stopped before it finished; its outcome is unknown")
	}
}

// storedEvents reads the events stored after seq, answering 409 or 503
// itself when it cannot (ok false); known is false when the store has no
// record of the stream in the session.
func (h *Handler) storedEvents(w http.ResponseWriter, r *http.Request, hs *httpSession, streamID string, seq uint64) (events []event, known, ok bool) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.StoreTimeout)
	defer cancel()
	err := h.store.Replay(ctx, hs.ss.ID(), streamID, seq, func(s uint64, data []byte) error {
		events = append(events, event{seq: s, data: data})
		return nil
	})
	switch {
	case errors.Is(err, store.ErrUnknownStream):
		return nil, false, true
	case errors.Is(err, store.ErrEventsPurged):
		writeError(w, http.StatusConflict, mcp.ID{}, mcp.CodeInvalidRequest, "Conflict: the events after Last-Event-ID are no longer stored")
		return nil, true, false
	case err != nil:
		h.log.Warn("streamhttp: event store replay failed", "session", hs.ss.ID(), "err", err)
		writeError(w, http.StatusServiceUnavailable, mcp.ID{}, mcp.CodeInternalError, "Service Unavailable: replay failed")
		return nil, true, false
	}
	return events, true, true
}

func (h *Handler) writeReplay(w http.ResponseWriter, hs *httpSession, streamID string, events []event) {
	out := &sseWriter{w: w}
	st := &stream{h: h, hs: hs, id: streamID}
	out.start(st, false, 0)
	for _, ev := range events {
		if out.event(st.eventID(ev.seq), ev.data) != nil {
			return
		}
	}
	out.flush()
}

func acceptsEvents(r *http.Request) bool {
	for _, v := range r.Header["Accept"] {
		for part := range strings.SplitSeq(v, ",") {
			if mt := mediaType(strings.TrimSpace(part)); mt == "text/event-stream" || mt == "text/*" || mt == "*/*" {
				return true
			}
		}
	}
	return false
}
