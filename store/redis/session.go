package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpkit/mcpkit/store"

	"github.com/go-json-experiment/json"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix is the key prefix used when an Options leaves it empty.
const DefaultPrefix = "mcpkit:"

// SessionStoreOptions configures a SessionStore. The zero value applies
// the defaults.
type SessionStoreOptions struct {
	// Prefix is put before every key. Default DefaultPrefix.
	Prefix string
	// TTL is how long a session is kept after its last read or write
	// (Get restarts the TTL, as Put does; an instance holding a copy
	// reads it once per streamhttp SessionCheckInterval while in use).
	// Default 1h. Keep it longer than the handler's idle timeout plus
	// that interval.
	TTL time.Duration
}

// SessionStore is a store.SessionStore on Redis.
type SessionStore struct {
	rdb  redis.UniversalClient
	opts SessionStoreOptions
}

var _ store.SessionStore = (*SessionStore)(nil)

// NewSessionStore returns a store using rdb; opts may be nil.
func NewSessionStore(rdb redis.UniversalClient, opts *SessionStoreOptions) *SessionStore {
	s := &SessionStore{rdb: rdb}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Prefix == "" {
		s.opts.Prefix = DefaultPrefix
	}
	if s.opts.TTL <= 0 {
		s.opts.TTL = time.Hour
	}
	return s
}

func (s *SessionStore) key(id string) string {
	return s.opts.Prefix + "{" + id + "}:session"
}

// Put implements store.SessionStore: it stores the state and restarts
// the session's TTL. A revision after the first updates only a session
// the store still holds (SET XX): one deleted or expired meanwhile is
// not created again, and Put returns store.ErrUnknownSession.
func (s *SessionStore) Put(ctx context.Context, id string, st *store.SessionState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("redisstore: encoding session %q: %w", id, err)
	}
	if st.Revision <= 1 {
		err = s.rdb.Set(ctx, s.key(id), b, s.opts.TTL).Err()
	} else {
		var set bool
		set, err = s.rdb.SetXX(ctx, s.key(id), b, s.opts.TTL).Result()
		if errors.Is(err, redis.Nil) || (err == nil && !set) {
			return store.ErrUnknownSession
		}
	}
	if err != nil {
		return fmt.Errorf("redisstore: storing session %q: %w", id, err)
	}
	return nil
}

// Get implements store.SessionStore: it reads the state and restarts
// the session's TTL in one command (GETEX). It returns
// store.ErrUnknownSession for an id that was never stored, was deleted
// or expired.
func (s *SessionStore) Get(ctx context.Context, id string) (*store.SessionState, error) {
	b, err := s.rdb.GetEx(ctx, s.key(id), s.opts.TTL).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, store.ErrUnknownSession
	}
	if err != nil {
		return nil, fmt.Errorf("redisstore: loading session %q: %w", id, err)
	}
	var st store.SessionState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("redisstore: decoding session %q: %w", id, err)
	}
	return &st, nil
}

// Delete implements store.SessionStore.
func (s *SessionStore) Delete(ctx context.Context, id string) error {
	if err := s.rdb.Del(ctx, s.key(id)).Err(); err != nil {
		return fmt.Errorf("redisstore: deleting session %q: %w", id, err)
	}
	return nil
}
