package redisstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/store"
)

// DefaultTaskUpdateAttempts bounds the compare-and-set attempts of one
// TaskStore.Update when TaskStoreOptions.UpdateAttempts is zero: past
// it, Update fails rather than spin against writers that keep winning.
const DefaultTaskUpdateAttempts = 100

// DefaultTaskKnownRecords bounds, when TaskStoreOptions.KnownRecords
// is zero, how many records a TaskStore remembers as it last wrote them.
const DefaultTaskKnownRecords = 10000

// unlimitedIndexTTL is the life of a task index that lists a task kept
// without a TTL.
const unlimitedIndexTTL = 10 * 365 * 24 * time.Hour

// TaskStoreOptions configures a TaskStore. The zero value applies the
// defaults.
type TaskStoreOptions struct {
	// Prefix is put before every key. Default DefaultPrefix.
	Prefix string
	// UpdateAttempts bounds the compare-and-set attempts of one Update.
	// Default DefaultTaskUpdateAttempts.
	UpdateAttempts int
	// KnownRecords bounds how many records, not yet terminal, this store
	// remembers as it last wrote them (Put, Update), so that Update tries
	// its compare-and-set on those bytes without reading the record
	// first: one round trip instead of two when no other writer came in
	// between (a task's owner settling it), and still one more, not two,
	// when one did (the script answers the record it found). A record
	// leaves once written terminal or deleted; past the bound an entry
	// is dropped (its next Update reads first). Default
	// DefaultTaskKnownRecords; negative: none.
	KnownRecords int
	// Now is the clock records are checked against (TaskRecord.Expired);
	// nil is time.Now. Redis itself drops a record at its expiry on its
	// own clock.
	Now func() time.Time
}

// TaskStore is a store.TaskStore on Redis. Each record is one JSON value
// whose key expires with the task (CreatedAt + TTL), so a completed
// task's result outlives the process that ran it and every instance can
// serve it; Update is a compare-and-set (a script), so a cancel and a
// completion racing on two instances settle the task once. Each
// principal's tasks (each session's, without a principal) are indexed in
// a sorted set by creation time, for List.
type TaskStore struct {
	rdb  redis.UniversalClient
	opts TaskStoreOptions

	mu    sync.Mutex
	known map[string]knownTask // at most opts.KnownRecords
}

// knownTask is a record as this store last wrote it: the stored bytes
// and the record they encode (never handed out: callers get clones).
type knownTask struct {
	b   []byte
	rec *store.TaskRecord
}

var _ store.TaskStore = (*TaskStore)(nil)

// NewTaskStore returns a task store using rdb; opts may be nil.
func NewTaskStore(rdb redis.UniversalClient, opts *TaskStoreOptions) *TaskStore {
	s := &TaskStore{rdb: rdb}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Prefix == "" {
		s.opts.Prefix = DefaultPrefix
	}
	if s.opts.UpdateAttempts <= 0 {
		s.opts.UpdateAttempts = DefaultTaskUpdateAttempts
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	switch {
	case s.opts.KnownRecords == 0:
		s.opts.KnownRecords = DefaultTaskKnownRecords
	case s.opts.KnownRecords < 0:
		s.opts.KnownRecords = 0
	}
	s.known = make(map[string]knownTask)
	return s
}

// remember keeps rec (the store's own copy) and its bytes b as the
// latest this store wrote of a task; a terminal record never changes
// again, so it is forgotten instead.
func (s *TaskStore) remember(rec *store.TaskRecord, b []byte) {
	if rec.Status.Terminal() || s.opts.KnownRecords == 0 {
		s.forget(rec.ID)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.known[rec.ID]; !ok && len(s.known) >= s.opts.KnownRecords {
		for id := range s.known { // full: drop any one
			delete(s.known, id)
			break
		}
	}
	s.known[rec.ID] = knownTask{b: b, rec: rec}
}

func (s *TaskStore) forget(id string) {
	s.mu.Lock()
	delete(s.known, id)
	s.mu.Unlock()
}

// recall returns a copy of the record this store last wrote of task id,
// with its bytes, if it remembers it.
func (s *TaskStore) recall(id string) (*store.TaskRecord, []byte, bool) {
	s.mu.Lock()
	k, ok := s.known[id]
	s.mu.Unlock()
	if !ok {
		return nil, nil, false
	}
	return k.rec.Clone(), k.b, true
}

func (s *TaskStore) key(id string) string { return s.opts.Prefix + "task:{" + id + "}" }

// indexKey is the sorted set listing a principal's tasks, or a
// session's when there is no principal.
func (s *TaskStore) indexKey(principal, sessionID string) string {
	if principal != "" {
		return s.opts.Prefix + "tasks:p:" + principal
	}
	return s.opts.Prefix + "tasks:s:" + sessionID
}

// encodeTask and decodeTask are the record as stored: the form every
// instance reads (store.MarshalTaskRecord).
func encodeTask(r *store.TaskRecord) ([]byte, error) { return store.MarshalTaskRecord(r) }

func decodeTask(b []byte) (*store.TaskRecord, error) { return store.UnmarshalTaskRecord(b) }

// Put implements store.TaskStore: the record expires at CreatedAt + TTL
// (never, for a zero TTL), and is added to its owner's index.
func (s *TaskStore) Put(ctx context.Context, rec *store.TaskRecord) error {
	b, err := encodeTask(rec)
	if err != nil {
		return fmt.Errorf("redisstore: encoding task %q: %w", rec.ID, err)
	}
	// The record with its expiry, then the index, in one pipeline: one
	// round trip. They are not one transaction (the index may live on
	// another node of a Redis Cluster): a record whose index entry is
	// missing is still served by id; an index entry without its record
	// is skipped (and dropped) by List.
	life := unlimitedIndexTTL
	args := redis.SetArgs{}
	if rec.TTL > 0 {
		at := rec.CreatedAt.Add(rec.TTL)
		args.ExpireAt = at.Truncate(time.Millisecond).Add(time.Millisecond) // never before the TTL
		life = time.Until(at) + time.Second
	}
	idx := s.indexKey(rec.Principal, rec.SessionID)
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.SetArgs(ctx, s.key(rec.ID), b, args)
		p.ZAdd(ctx, idx, redis.Z{Score: float64(rec.CreatedAt.UnixMilli()), Member: rec.ID})
		// The index lives as long as its longest-lived task (NX: a new
		// index; GT: extend one); a task kept forever keeps it for
		// unlimitedIndexTTL.
		p.ExpireNX(ctx, idx, life)
		p.ExpireGT(ctx, idx, life)
		return nil
	})
	if err != nil {
		s.forget(rec.ID)
		return fmt.Errorf("redisstore: storing task %q: %w", rec.ID, err)
	}
	s.remember(rec.Clone(), b)
	return nil
}

// Get implements store.TaskStore.
func (s *TaskStore) Get(ctx context.Context, id string) (*store.TaskRecord, error) {
	rec, _, err := s.load(ctx, id, "loading")
	return rec, err
}

// load reads task id's record and its stored bytes; a missing or expired
// record is store.ErrTaskNotFound. doing names the operation in errors.
func (s *TaskStore) load(ctx context.Context, id, doing string) (*store.TaskRecord, []byte, error) {
	b, err := s.rdb.Get(ctx, s.key(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil, store.ErrTaskNotFound
	}
	if err != nil {
		return nil, nil, fmt.Errorf("redisstore: %s task %q: %w", doing, id, err)
	}
	rec, err := decodeTask(b)
	if err != nil {
		return nil, nil, fmt.Errorf("redisstore: decoding task %q: %w", id, err)
	}
	if rec.Expired(s.opts.Now()) {
		return nil, nil, store.ErrTaskNotFound
	}
	return rec, b, nil
}

// casScript writes a task's new record if the stored one is still the
// one expected (byte for byte), keeping the key's expiry: the compare and
// the set are one atomic step on Redis. KEYS: the record. ARGV: the
// record expected, the new one, and optionally a channel and a message
// it publishes once it wrote (TaskStore.UpdateCast). It returns 1 when
// written, -1 when the record is gone, and the stored record when
// another write landed (the next attempt compares against it, with no
// read of its own).
var casScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then
  return -1
end
if cur ~= ARGV[1] then
  return cur
end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
if ARGV[3] then
  redis.call('PUBLISH', ARGV[3], ARGV[4])
end
return 1
`)

// Update implements store.TaskStore as a compare-and-set: fn runs on
// the record as last known (written here, or read), and the write
// (casScript) is refused, answering the stored record, on which fn
// runs again, when another write landed in between. A record this
// store wrote last (KnownRecords) is not read first: the owner of a
// task settles it in one round trip. When fn declines a change on such
// a remembered record, the record is read to confirm it: Update
// reports the record as stored, never a stale copy.
func (s *TaskStore) Update(ctx context.Context, id string, fn func(*store.TaskRecord) bool) (*store.TaskRecord, bool, error) {
	return s.update(ctx, id, fn, "", nil)
}

// CanCast reports whether UpdateCast can publish on target, a Broker's
// CastTarget: whether that Broker publishes through this store's client.
func (s *TaskStore) CanCast(target any) bool {
	t, ok := target.(*castTarget)
	return ok && t != nil && sameClient(t.rdb, s.rdb)
}

// sameClient reports whether a and b are the same client; false for a
// client type that == cannot compare (it would panic).
func sameClient(a, b redis.UniversalClient) bool {
	ta := reflect.TypeOf(a)
	return ta != nil && ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

// UpdateCast is Update that, when it writes, publishes the broadcast
// cast returns for the record written on target (a Broker's CastTarget,
// CanCast) in the same script as the write: one round trip for both,
// and the broadcast leaves only when the compare-and-set succeeded. A
// write lost to another calls cast again on the next attempt's record.
// It reports an error, writing nothing, when CanCast(target) is false.
func (s *TaskStore) UpdateCast(ctx context.Context, id string, fn func(*store.TaskRecord) bool, target any, cast func(*store.TaskRecord) ([]byte, error)) (*store.TaskRecord, bool, error) {
	if !s.CanCast(target) {
		return nil, false, errors.New("redisstore: UpdateCast: the broker does not publish through this store's client")
	}
	if cast == nil {
		return nil, false, errors.New("redisstore: UpdateCast: no broadcast")
	}
	return s.update(ctx, id, fn, target.(*castTarget).channel, cast)
}

func (s *TaskStore) update(ctx context.Context, id string, fn func(*store.TaskRecord) bool, channel string, cast func(*store.TaskRecord) ([]byte, error)) (*store.TaskRecord, bool, error) {
	key := s.key(id)
	rec, b, known := s.recall(id)
	if known && rec.Expired(s.opts.Now()) {
		s.forget(id)
		return nil, false, store.ErrTaskNotFound
	}
	for range s.opts.UpdateAttempts {
		if rec == nil {
			var err error
			if rec, b, err = s.load(ctx, id, "updating"); err != nil {
				return nil, false, err
			}
		}
		next := rec.Clone()
		if !fn(next) {
			if known { // remembered, perhaps stale: read to confirm
				rec, known = nil, false
				continue
			}
			return rec, false, nil
		}
		next.ID = id
		nb, err := encodeTask(next)
		if err != nil {
			return nil, false, fmt.Errorf("redisstore: encoding task %q: %w", id, err)
		}
		args := []any{b, nb}
		if cast != nil {
			msg, err := cast(next)
			if err != nil {
				return nil, false, err
			}
			args = append(args, channel, msg)
		}
		v, err := casScript.Run(ctx, s.rdb, []string{key}, args...).Result()
		if err != nil {
			s.forget(id)
			return nil, false, fmt.Errorf("redisstore: updating task %q: %w", id, err)
		}
		switch v := v.(type) {
		case int64:
			if v < 0 {
				s.forget(id)
				return nil, false, store.ErrTaskNotFound
			}
			s.remember(next.Clone(), nb)
			return next.Clone(), true, nil
		case string:
			// Another write won: fn runs again on what it wrote.
			cur, err := decodeTask([]byte(v))
			if err != nil {
				s.forget(id)
				return nil, false, fmt.Errorf("redisstore: decoding task %q: %w", id, err)
			}
			if cur.Expired(s.opts.Now()) {
				s.forget(id)
				return nil, false, store.ErrTaskNotFound
			}
			rec, b, known = cur, []byte(v), false
		default:
			s.forget(id)
			return nil, false, fmt.Errorf("redisstore: updating task %q: unexpected answer %T", id, v)
		}
	}
	s.forget(id)
	return nil, false, fmt.Errorf("redisstore: updating task %q: %d attempts lost to concurrent writes", id, s.opts.UpdateAttempts)
}

// List implements store.TaskStore: the index in creation order (ties by
// id), without the records that expired meanwhile, which it drops from
// the index.
func (s *TaskStore) List(ctx context.Context, principal, sessionID string) ([]*store.TaskRecord, error) {
	idx := s.indexKey(principal, sessionID)
	ids, err := s.rdb.ZRange(ctx, idx, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: listing tasks: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.key(id)
	}
	vals, err := s.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: listing tasks: %w", err)
	}
	now := s.opts.Now()
	var out []*store.TaskRecord
	var stale []any
	for i, v := range vals {
		str, ok := v.(string)
		if !ok {
			stale = append(stale, ids[i])
			continue
		}
		rec, err := decodeTask([]byte(str))
		if err != nil || rec.Expired(now) {
			continue
		}
		if rec.Principal != principal || (principal == "" && rec.SessionID != sessionID) {
			continue
		}
		out = append(out, rec)
	}
	if len(stale) > 0 {
		_ = s.rdb.ZRem(ctx, idx, stale...).Err() // best effort: List skips them anyway
	}
	return out, nil
}

// Delete implements store.TaskStore; the index entry goes at the next
// List.
func (s *TaskStore) Delete(ctx context.Context, id string) error {
	s.forget(id)
	if err := s.rdb.Del(ctx, s.key(id)).Err(); err != nil {
		return fmt.Errorf("redisstore: deleting task %q: %w", id, err)
	}
	return nil
}
