package redisstore

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpkit/mcpkit/store"

	"github.com/redis/go-redis/v9"
)

// EventStoreOptions configures an EventStore. The zero value applies the
// defaults.
type EventStoreOptions struct {
	// Prefix is put before every key. Default DefaultPrefix.
	Prefix string
	// MaxEventsPerStream is how many events one stream keeps; older ones
	// are dropped, and a replay that needs them fails with
	// store.ErrEventsPurged. Default 1024.
	MaxEventsPerStream int
	// TTL is how long a session's events are kept after its last Append,
	// so that the events of abandoned sessions expire. Default 1h.
	TTL time.Duration
}

// EventStore is a store.EventStore on Redis. Each stream is a capped
// list under prefix+"{session}:ev:"+stream; prefix+"{session}:evp:"+stream
// holds the sequence number up to which events were dropped, and
// prefix+"{session}:evkeys" the set of both, for Purge.
type EventStore struct {
	rdb  redis.UniversalClient
	opts EventStoreOptions
}

var _ store.EventStore = (*EventStore)(nil)

// NewEventStore returns a store using rdb; opts may be nil.
func NewEventStore(rdb redis.UniversalClient, opts *EventStoreOptions) *EventStore {
	s := &EventStore{rdb: rdb}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Prefix == "" {
		s.opts.Prefix = DefaultPrefix
	}
	if s.opts.MaxEventsPerStream <= 0 {
		s.opts.MaxEventsPerStream = 1024
	}
	if s.opts.TTL <= 0 {
		s.opts.TTL = time.Hour
	}
	return s
}

func (s *EventStore) keys(session, stream string) (list, marker, set string) {
	base := s.opts.Prefix + "{" + session + "}:"
	return base + "ev:" + stream, base + "evp:" + stream, base + "evkeys"
}

// Each list element is the decimal sequence number, a space, and the data.

// appendScript pushes an event, drops the oldest ones beyond the cap
// (recording the last dropped sequence number in the marker), records
// the keys in the session's set and refreshes the TTLs, atomically.
// KEYS: list, marker, set. ARGV: element, cap, ttl in ms.
var appendScript = redis.NewScript(`
redis.call('RPUSH', KEYS[1], ARGV[1])
local max = tonumber(ARGV[2])
local n = redis.call('LLEN', KEYS[1])
while n > max do
  local e = redis.call('LPOP', KEYS[1])
  local sp = string.find(e, ' ', 1, true)
  redis.call('SET', KEYS[2], string.sub(e, 1, sp - 1))
  n = n - 1
end
redis.call('SADD', KEYS[3], KEYS[1], KEYS[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return n
`)

// purgeScript deletes every key listed in the session's set, and the set.
// KEYS: set.
var purgeScript = redis.NewScript(`
local ks = redis.call('SMEMBERS', KEYS[1])
for _, k in ipairs(ks) do
  redis.call('DEL', k)
end
redis.call('DEL', KEYS[1])
return #ks
`)

// Append implements store.EventStore.
func (s *EventStore) Append(ctx context.Context, session, stream string, seq uint64, data []byte) error {
	list, marker, set := s.keys(session, stream)
	el := make([]byte, 0, 21+len(data))
	el = strconv.AppendUint(el, seq, 10)
	el = append(el, ' ')
	el = append(el, data...)
	err := appendScript.Run(ctx, s.rdb, []string{list, marker, set},
		el, s.opts.MaxEventsPerStream, s.opts.TTL.Milliseconds()).Err()
	if err != nil {
		return fmt.Errorf("redisstore: appending event %d of stream %q: %w", seq, stream, err)
	}
	return nil
}

// Replay implements store.EventStore. It fails with
// store.ErrEventsPurged, delivering nothing, when an event after the
// given one was dropped (by the cap or by expiry), and with
// store.ErrUnknownStream when the session's key set does not list the
// stream (no event of it was appended in this session) and nothing of
// it is left, or when every key of the session's events has expired.
func (s *EventStore) Replay(ctx context.Context, session, stream string, after uint64, fn func(seq uint64, data []byte) error) error {
	list, marker, set := s.keys(session, stream)
	elems, m, known, err := s.load(ctx, list, marker, set)
	if err != nil {
		return fmt.Errorf("redisstore: replaying stream %q: %w", stream, err)
	}
	if len(elems) == 0 && m == "" && !known {
		// No event of the stream was ever appended in this session (the
		// session's set would list it), or all its keys have expired.
		return store.ErrUnknownStream
	}
	var purged uint64
	if m != "" {
		if purged, err = strconv.ParseUint(m, 10, 64); err != nil {
			return fmt.Errorf("redisstore: stream %q: bad purge marker %q", stream, m)
		}
	}
	if after < purged {
		return store.ErrEventsPurged
	}
	type ev struct {
		seq  uint64
		data []byte
	}
	var events []ev
	if len(elems) == 0 && after > 0 && purged == 0 {
		// The client holds event after, so it was stored: the stream has
		// expired or was purged since.
		return store.ErrEventsPurged
	}
	next := after + 1
	for _, e := range elems {
		sp := bytes.IndexByte([]byte(e), ' ')
		if sp < 0 {
			return fmt.Errorf("redisstore: stream %q: malformed event", stream)
		}
		seq, err := strconv.ParseUint(e[:sp], 10, 64)
		if err != nil {
			return fmt.Errorf("redisstore: stream %q: malformed event", stream)
		}
		if seq <= after {
			continue
		}
		if seq != next {
			// A gap: events between were lost.
			return store.ErrEventsPurged
		}
		next++
		events = append(events, ev{seq, []byte(e[sp+1:])})
	}
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

// loadScript reads what Replay needs in one command: the stream's
// events, its purge marker ("" when none) and whether the session's key
// set lists the stream (1 or 0). KEYS: list, marker, set.
var loadScript = redis.NewScript(`
return {redis.call('LRANGE', KEYS[1], 0, -1), redis.call('GET', KEYS[2]) or '', redis.call('SISMEMBER', KEYS[3], KEYS[1])}
`)

// load runs loadScript.
func (s *EventStore) load(ctx context.Context, list, marker, set string) (elems []string, purged string, known bool, err error) {
	v, err := loadScript.Run(ctx, s.rdb, []string{list, marker, set}).Slice()
	if err != nil {
		return nil, "", false, err
	}
	if len(v) != 3 {
		return nil, "", false, fmt.Errorf("unexpected answer %v", v)
	}
	raw, _ := v[0].([]any)
	elems = make([]string, 0, len(raw))
	for _, e := range raw {
		str, ok := e.(string)
		if !ok {
			return nil, "", false, fmt.Errorf("unexpected event %T", e)
		}
		elems = append(elems, str)
	}
	purged, _ = v[1].(string)
	n, _ := v[2].(int64)
	return elems, purged, n == 1, nil
}

// Purge implements store.EventStore: it deletes every key of the
// session's events.
func (s *EventStore) Purge(ctx context.Context, session string) error {
	_, _, set := s.keys(session, "")
	if err := purgeScript.Run(ctx, s.rdb, []string{set}).Err(); err != nil {
		return fmt.Errorf("redisstore: purging session %q: %w", session, err)
	}
	return nil
}
