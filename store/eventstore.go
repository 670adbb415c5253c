package store

import (
	"context"
	"errors"
	"sync"
)

// EventStore keeps the SSE events of legacy HTTP sessions so that a
// client can resume a stream with Last-Event-ID (2025-11-25 resumability,
// SEP-1699). Events are numbered per stream from 1 by the server; a
// stream id is unique within its session.
//
// Implementations must be safe for concurrent use. Replay must either
// deliver every event of the stream after the given one, in order, or
// fail with ErrEventsPurged without delivering any: a partial replay
// would silently lose messages. For a stream it holds no record of in
// that session, Replay fails with ErrUnknownStream, so that a made-up
// stream id, or another session's, is told from a stream with nothing
// left to replay.
type EventStore interface {
	// Append stores event seq of a stream.
	Append(ctx context.Context, session, stream string, seq uint64, data []byte) error
	// Replay calls fn for each stored event of the stream with a
	// sequence number above after, in order; ErrUnknownStream when the
	// session has no record of the stream.
	Replay(ctx context.Context, session, stream string, after uint64, fn func(seq uint64, data []byte) error) error
	// Purge drops every event of a session; it is called when the
	// session ends.
	Purge(ctx context.Context, session string) error
}

// ErrEventsPurged reports that events needed for a replay are gone.
var ErrEventsPurged = errors.New("store: the events to replay are no longer stored")

// ErrUnknownStream is returned by Replay for a stream of which the store
// holds no record in that session: none of its events was ever stored
// there, or the store has forgotten the session's events altogether. The
// handler answers such a resumption 404: the client named a stream its
// session never had (a made-up id, or another session's stream).
var ErrUnknownStream = errors.New("store: unknown event stream")

// MemoryEventStoreOptions bounds a MemoryEventStore. The zero value
// applies the defaults.
type MemoryEventStoreOptions struct {
	// MaxEventsPerStream is how many events one stream keeps; older
	// ones are dropped. Default 1024.
	MaxEventsPerStream int
	// MaxBytesPerSession caps the data one session keeps across its
	// streams; the oldest events of the largest stream are dropped first.
	// Default 8 MiB.
	MaxBytesPerSession int
}

// MemoryEventStore is the default EventStore: bounded, in process. The
// zero value is an empty store with the default bounds.
type MemoryEventStore struct {
	opts     MemoryEventStoreOptions
	mu       sync.Mutex
	sessions map[string]*memSession
}

type memSession struct {
	bytes   int
	streams map[string]*memStream
}

type memStream struct {
	events []memEvent
	purged uint64 // every event up to this seq was dropped
}

type memEvent struct {
	seq  uint64
	data []byte
}

// NewMemoryEventStore returns an empty store; opts may be nil.
func NewMemoryEventStore(opts *MemoryEventStoreOptions) *MemoryEventStore {
	st := &MemoryEventStore{}
	if opts != nil {
		st.opts = *opts
	}
	return st
}

// maxEvents and maxBytes return the bounds, defaults applied.
func (st *MemoryEventStore) maxEvents() int {
	if st.opts.MaxEventsPerStream <= 0 {
		return 1024
	}
	return st.opts.MaxEventsPerStream
}

func (st *MemoryEventStore) maxBytes() int {
	if st.opts.MaxBytesPerSession <= 0 {
		return 8 << 20
	}
	return st.opts.MaxBytesPerSession
}

// Append implements EventStore.
func (st *MemoryEventStore) Append(_ context.Context, session, stream string, seq uint64, data []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	ms := st.sessions[session]
	if ms == nil {
		ms = &memSession{streams: make(map[string]*memStream)}
		if st.sessions == nil {
			st.sessions = make(map[string]*memSession)
		}
		st.sessions[session] = ms
	}
	s := ms.streams[stream]
	if s == nil {
		s = &memStream{}
		ms.streams[stream] = s
	}
	s.events = append(s.events, memEvent{seq: seq, data: data})
	ms.bytes += len(data)
	if len(s.events) > st.maxEvents() {
		ms.bytes -= s.drop()
	}
	for ms.bytes > st.maxBytes() {
		var largest *memStream
		for _, cand := range ms.streams {
			if len(cand.events) > 0 && (largest == nil || len(cand.events) > len(largest.events)) {
				largest = cand
			}
		}
		if largest == nil {
			break
		}
		ms.bytes -= largest.drop()
	}
	return nil
}

// drop removes the oldest event and returns its size.
func (s *memStream) drop() int {
	e := s.events[0]
	s.events = s.events[1:]
	s.purged = e.seq
	return len(e.data)
}

// Replay implements EventStore.
func (st *MemoryEventStore) Replay(ctx context.Context, session, stream string, after uint64, fn func(uint64, []byte) error) error {
	st.mu.Lock()
	var events []memEvent
	var s *memStream
	if ms := st.sessions[session]; ms != nil {
		s = ms.streams[stream]
	}
	if s == nil {
		st.mu.Unlock()
		return ErrUnknownStream
	}
	if after < s.purged {
		st.mu.Unlock()
		return ErrEventsPurged
	}
	for _, e := range s.events {
		if e.seq > after {
			events = append(events, e)
		}
	}
	st.mu.Unlock()
	for _, e := range events {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(e.seq, e.data); err != nil {
			return err
		}
	}
	return nil
}

// SessionCount returns how many sessions have events stored.
func (st *MemoryEventStore) SessionCount() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.sessions)
}

// Purge implements EventStore.
func (st *MemoryEventStore) Purge(_ context.Context, session string) error {
	st.mu.Lock()
	delete(st.sessions, session)
	st.mu.Unlock()
	return nil
}
