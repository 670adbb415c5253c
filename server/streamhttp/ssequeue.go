package streamhttp

import (
	"context"
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// The queue of a 2024-11-05 session: the messages waiting for its one
// event stream, bounded in count (Options.LegacySSEQueue) and in bytes
// (Options.LegacySSEQueueBytes), and never waited on
// (docs/design/legacy-sse.md, "Backlog"):
//
//   - A POSTed request takes a place for its answer before it is handed
//     to the session (admit); with no place left the POST is refused
//     (429), so no handler ever finishes with an answer it cannot queue,
//     and a ping is answered or refused, never held.
//   - An answer with a place is queued at once; one that would take the
//     queue past its byte bound while other messages wait ends the
//     session (its client is that far behind), since dropping an answer
//     would leave the client waiting for it. An answer alone in the
//     queue is queued whatever its size.
//   - Anything else (notifications, the server's own requests, an answer
//     without a place) is dropped when the queue is full, as the
//     Streamable HTTP streams drop messages for a client that is away.
//
// Messages the stream goroutine has taken but not yet written count
// until the write returns, so a stream stuck in a write still bounds its
// session.

// DefaultLegacySSEQueueBytes is the default of Options.LegacySSEQueueBytes.
const DefaultLegacySSEQueueBytes = 4 << 20

// sseRetryAfterSeconds is the Retry-After of a POST refused because the
// session's queue is full: the client must read its stream first, which
// a client that is reading does within moments.
const sseRetryAfterSeconds = 1

// admit takes a place in the queue for the answer of request id; false:
// the queue (with the places already taken) is full. A request whose id
// already holds a place takes none: the connection refuses the duplicate
// and that refusal is an answer without a place.
func (s *sseSession) admit(id mcp.ID) bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if _, dup := s.reserved[id]; dup {
		return true
	}
	if s.qLen+len(s.reserved) >= s.h.opts.LegacySSEQueue || s.qBytes >= s.h.opts.LegacySSEQueueBytes {
		return false
	}
	if s.reserved == nil {
		s.reserved = make(map[mcp.ID]struct{}) // on the first request: an idle session holds none
	}
	s.reserved[id] = struct{}{}
	return true
}

// cancelled gives back the place of a request the client cancelled
// (notifications/cancelled): its answer, if it still comes, has no place.
func (s *sseSession) cancelled(params jsontext.Value) {
	var p struct {
		RequestID jsontext.Value `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return
	}
	id, err := mcp.ParseID(p.RequestID)
	if err != nil {
		return
	}
	s.qmu.Lock()
	delete(s.reserved, id)
	if len(s.reserved) == 0 {
		s.reserved = nil
	}
	s.qmu.Unlock()
}

// Write implements transport.Conn by queueing the message for the
// stream; it never waits (see above). It keeps m.Data without a copy:
// its only writer is the session's jsonrpc.Conn, whose messages are
// freshly encoded.
func (s *sseSession) Write(_ context.Context, m transport.Message) error {
	select {
	case <-s.done:
		return transport.ErrClosed
	default:
	}
	s.qmu.Lock()
	placed := false
	if m.Final && m.Related.IsValid() {
		if _, placed = s.reserved[m.Related]; placed {
			delete(s.reserved, m.Related)
			if len(s.reserved) == 0 {
				s.reserved = nil // an idle session holds no map
			}
		}
	}
	over := s.qLen > 0 && s.qBytes+len(m.Data) > s.h.opts.LegacySSEQueueBytes
	switch {
	case placed && over:
		s.qmu.Unlock()
		s.h.log.Warn("streamhttp: ending a 2024-11-05 session whose client does not read its stream",
			"session", s.ss.ID(), "queuedBytes", s.qBytes, "limit", s.h.opts.LegacySSEQueueBytes)
		s.Close()
		return transport.ErrClosed
	case !placed && (over || s.qLen+len(s.reserved) >= s.h.opts.LegacySSEQueue):
		s.qmu.Unlock()
		s.dropped.Add(1)
		s.h.log.Warn("streamhttp: dropped a message for a 2024-11-05 client that does not read its stream", "session", s.ss.ID())
		return nil
	}
	s.q = append(s.q, m.Data)
	s.qLen++
	s.qBytes += len(m.Data)
	s.qmu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // already signalled
	}
	return nil
}

// take hands the queued messages to the stream goroutine, appended to
// buf as events, with their count and bytes: they keep counting against
// the bounds until sent is called with them.
func (s *sseSession) take(buf []byte) (out []byte, n, b int) {
	s.qmu.Lock()
	q := s.q
	s.q = nil
	s.qmu.Unlock()
	for _, e := range q {
		buf = sse.AppendTypedEvent(buf, "message", e)
		b += len(e)
	}
	return buf, len(q), b
}

// sent releases what take handed out once it has been written (or the
// stream has ended).
func (s *sseSession) sent(n, b int) {
	if n == 0 {
		return
	}
	s.qmu.Lock()
	s.qLen -= n
	s.qBytes -= b
	s.qmu.Unlock()
}

// refuseFull answers a POSTed request for which the queue has no place:
// 429 with Retry-After, and a rate-limit error (mcp.CodeRateLimited)
// carrying the request's id.
func refuseFull(w http.ResponseWriter, id mcp.ID) {
	w.Header().Set("Retry-After", strconv.Itoa(sseRetryAfterSeconds))
	e := jsonrpc.NewError(mcp.CodeRateLimited, "Too Many Requests: the session's event stream has too many unread messages; read it, then retry").
		WithData(mcp.RateLimitedData{RetryAfterMs: sseRetryAfterSeconds * 1000})
	writeRPCError(w, http.StatusTooManyRequests, id, e)
}
