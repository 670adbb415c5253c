package redisstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/store"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

func TestSessionStoreRoundTrip(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	p := prefix(t)
	s := NewSessionStore(rdb, &SessionStoreOptions{Prefix: p})
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, store.ErrUnknownSession) {
		t.Fatalf("Get of an unknown id: %v, want ErrUnknownSession", err)
	}
	want := &store.SessionState{
		ProtocolVersion:    mcp.Version20251125,
		ClientCapabilities: mcp.ClientCapabilities{Roots: &mcp.RootsCapability{ListChanged: true}},
		ClientInfo:         mcp.Implementation{Name: "c", Version: "1"},
		Ready:              true,
		LogLevel:           mcp.LevelError,
		Subscriptions:      []string{"test://a", "test://b"},
	}
	if err := s.Put(ctx, "s1", want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Get = %+v, want %+v", got, want)
	}
	if err := s.Delete(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "s1"); !errors.Is(err, store.ErrUnknownSession) {
		t.Fatalf("Get after Delete: %v, want ErrUnknownSession", err)
	}
	if err := s.Delete(ctx, "s1"); err != nil {
		t.Errorf("Delete of a deleted session: %v", err)
	}
	// A later revision saved after the DELETE (by a copy that missed it)
	// does not create the session again.
	if err := s.Put(ctx, "s1", &store.SessionState{Revision: 2}); !errors.Is(err, store.ErrUnknownSession) {
		t.Errorf("Put of revision 2 after Delete: %v, want ErrUnknownSession", err)
	}
	if n := keyCount(t, p); n != 0 {
		t.Errorf("%d keys left", n)
	}
}

func TestSessionStoreTTL(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	p := prefix(t)
	s := NewSessionStore(rdb, &SessionStoreOptions{Prefix: p, TTL: time.Minute})
	st := &store.SessionState{ProtocolVersion: mcp.Version20251125}
	if err := s.Put(ctx, "s1", st); err != nil {
		t.Fatal(err)
	}
	key := s.key("s1")
	// Put refreshes the TTL.
	if err := rdb.PExpire(ctx, key, time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "s1", st); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl < 50*time.Second || ttl > time.Minute {
		t.Errorf("TTL after Put = %v, want about 1m", ttl)
	}
	// So does Get: the handler reads the session on each of its requests,
	// and a session in use must not expire.
	if err := rdb.PExpire(ctx, key, time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl < 50*time.Second || ttl > time.Minute {
		t.Errorf("TTL after Get = %v, want about 1m", ttl)
	}
	// A store's own TTL is what Put sets (30 s here: far from the 1 min
	// above, and from 0, however slow the machine)…
	short := NewSessionStore(rdb, &SessionStoreOptions{Prefix: p, TTL: 30 * time.Second})
	if err := short.Put(ctx, "s2", st); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, short.key("s2")).Val(); ttl <= 0 || ttl > 30*time.Second {
		t.Errorf("TTL after Put = %v, want at most 30s and positive", ttl)
	}
	// …and the session ends when it runs out (Redis expires the key: the
	// test shortens what is left rather than wait 30 s).
	if err := rdb.PExpire(ctx, short.key("s2"), time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for rdb.Exists(ctx, short.key("s2")).Val() != 0 { // unused: it expires
		if time.Now().After(deadline) {
			t.Fatal("session still there after its TTL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := short.Get(ctx, "s2"); !errors.Is(err, store.ErrUnknownSession) {
		t.Fatalf("Get after expiry: %v, want ErrUnknownSession", err)
	}
}

// collect replays a stream into a slice.
func collect(t *testing.T, s *EventStore, session, stream string, after uint64) ([]string, error) {
	t.Helper()
	var out []string
	err := s.Replay(context.Background(), session, stream, after, func(seq uint64, data []byte) error {
		out = append(out, fmt.Sprintf("%d:%s", seq, data))
		return nil
	})
	return out, err
}

func TestEventStoreAppendReplay(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	p := prefix(t)
	s := NewEventStore(rdb, &EventStoreOptions{Prefix: p})
	for i := uint64(1); i <= 3; i++ {
		if err := s.Append(ctx, "sess", "a", i, fmt.Appendf(nil, "a%d", i)); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, "sess", "b", i, fmt.Appendf(nil, "b %d\n", i)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := collect(t, s, "sess", "a", 0)
	if want := []string{"1:a1", "2:a2", "3:a3"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("replay a from 0 = %q, %v; want %q", got, err, want)
	}
	got, err = collect(t, s, "sess", "b", 1)
	if want := []string{"2:b 2\n", "3:b 3\n"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("replay b from 1 = %q, %v; want %q", got, err, want)
	}
	got, err = collect(t, s, "sess", "a", 3)
	if err != nil || len(got) != 0 {
		t.Errorf("replay a from its last event = %q, %v; want nothing", got, err)
	}
	// A stream that never had events in the session is unknown, as is a
	// stream of another session.
	for _, c := range []struct{ session, stream string }{{"sess", "none"}, {"other", "a"}} {
		got, err = collect(t, s, c.session, c.stream, 0)
		if !errors.Is(err, store.ErrUnknownStream) || len(got) != 0 {
			t.Errorf("replay of unknown stream %s/%s = %q, %v; want ErrUnknownStream", c.session, c.stream, got, err)
		}
	}
	// A stream whose list expired (or was dropped) while the session's
	// events live on is known: the events the client saw are gone.
	if err := rdb.Del(ctx, p+"{sess}:ev:b").Err(); err != nil {
		t.Fatal(err)
	}
	if got, err = collect(t, s, "sess", "b", 1); !errors.Is(err, store.ErrEventsPurged) {
		t.Errorf("replay of an expired stream of a live session = %q, %v; want ErrEventsPurged", got, err)
	}
	// An error of fn stops the replay and is returned.
	boom := errors.New("boom")
	n := 0
	err = s.Replay(ctx, "sess", "a", 0, func(uint64, []byte) error { n++; return boom })
	if !errors.Is(err, boom) || n != 1 {
		t.Errorf("Replay with failing fn: %v after %d calls", err, n)
	}
	// Every key has a TTL.
	keys, _ := rdb.Keys(ctx, p+"*").Result()
	for _, k := range keys {
		if ttl := rdb.PTTL(ctx, k).Val(); ttl <= 0 {
			t.Errorf("key %s has no TTL (%v)", k, ttl)
		}
	}
}

func TestEventStoreCap(t *testing.T) {
	redistest.Need(t)
	s := NewEventStore(rdb, &EventStoreOptions{Prefix: prefix(t), MaxEventsPerStream: 3})
	for i := uint64(1); i <= 5; i++ {
		if err := s.Append(context.Background(), "sess", "a", i, fmt.Appendf(nil, "e%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := rdb.LLen(context.Background(), s.opts.Prefix+"{sess}:ev:a").Val(); n != 3 {
		t.Errorf("list holds %d events, want 3", n)
	}
	for _, after := range []uint64{0, 1} {
		got, err := collect(t, s, "sess", "a", after)
		if !errors.Is(err, store.ErrEventsPurged) || len(got) != 0 {
			t.Errorf("replay from %d = %q, %v; want ErrEventsPurged and nothing", after, got, err)
		}
	}
	got, err := collect(t, s, "sess", "a", 2)
	if want := []string{"3:e3", "4:e4", "5:e5"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("replay from 2 = %q, %v; want %q", got, err, want)
	}
}

func TestEventStoreExpired(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	p := prefix(t)
	s := NewEventStore(rdb, &EventStoreOptions{Prefix: p, TTL: 50 * time.Millisecond})
	if err := s.Append(ctx, "sess", "a", 1, []byte("x")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for keyCount(t, p) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("keys did not expire")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Every key of the session's events is gone: the store knows
	// nothing of the stream any more (not an empty replay).
	if _, err := collect(t, s, "sess", "a", 1); !errors.Is(err, store.ErrUnknownStream) {
		t.Errorf("replay of an expired stream: %v, want ErrUnknownStream", err)
	}
}

func TestEventStorePurge(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	p := prefix(t)
	s := NewEventStore(rdb, &EventStoreOptions{Prefix: p, MaxEventsPerStream: 2})
	for i := uint64(1); i <= 3; i++ {
		for _, sess := range []string{"s1", "s2"} {
			for _, stream := range []string{"a", "b"} {
				if err := s.Append(ctx, sess, stream, i, []byte("x")); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := s.Purge(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if n := keyCount(t, p+"{s1}"); n != 0 {
		t.Errorf("%d keys of s1 left after Purge", n)
	}
	got, err := collect(t, s, "s2", "b", 1)
	if err != nil || len(got) != 2 {
		t.Errorf("s2 after purging s1: %q, %v", got, err)
	}
	if err := s.Purge(ctx, "s1"); err != nil {
		t.Errorf("second Purge: %v", err)
	}
}

// TestRedisUnavailable: with Redis gone, every operation fails promptly
// with an error that is neither ErrUnknownSession nor ErrEventsPurged
// (which would tell the handler the session or events are gone).
func TestRedisUnavailable(t *testing.T) {
	dead := redis.NewClient(&redis.Options{Network: "unix", Addr: filepath.Join(t.TempDir(), "none.sock"), MaxRetries: -1})
	defer dead.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ss := NewSessionStore(dead, nil)
	es := NewEventStore(dead, nil)
	checks := map[string]error{
		"Put":    ss.Put(ctx, "s", &store.SessionState{}),
		"Delete": ss.Delete(ctx, "s"),
		"Append": es.Append(ctx, "s", "a", 1, []byte("x")),
		"Replay": es.Replay(ctx, "s", "a", 0, func(uint64, []byte) error { return nil }),
		"Purge":  es.Purge(ctx, "s"),
	}
	_, checks["Get"] = ss.Get(ctx, "s")
	for op, err := range checks {
		if err == nil || errors.Is(err, store.ErrUnknownSession) || errors.Is(err, store.ErrEventsPurged) || !strings.Contains(err.Error(), "redisstore:") {
			t.Errorf("%s with Redis down: %v", op, err)
		}
	}
	if _, err := NewBroker(ctx, dead, nil); err == nil || !strings.Contains(err.Error(), "redisstore: subscribing the broker") {
		t.Errorf("NewBroker with Redis down: %v", err)
	}
	if ctx.Err() != nil {
		t.Error("operations hung until the deadline")
	}
}
