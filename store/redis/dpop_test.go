package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// replayCache is auth.ReplayCache, which this module does not import:
// the Redis cache must satisfy it as it is.
type replayCache interface {
	Seen(ctx context.Context, key string, until time.Time) (bool, error)
}

var _ replayCache = (*ReplayCache)(nil)

func TestReplayCacheAcrossClients(t *testing.T) {
	redistest.Need(t)
	p := prefix(t)
	ctx := context.Background()
	// Two instances, each with its own connection to the same Redis.
	other := redis.NewClient(rdb.Options())
	defer other.Close()
	var a, b replayCache = NewReplayCache(rdb, p), NewReplayCache(other, p)
	until := time.Now().Add(time.Minute)
	if seen, err := a.Seen(ctx, "proof1", until); seen || err != nil {
		t.Fatalf("first use: seen %v, err %v", seen, err)
	}
	if seen, err := b.Seen(ctx, "proof1", until); !seen || err != nil {
		t.Fatalf("replay on the other instance: seen %v, err %v", seen, err)
	}
	if seen, err := a.Seen(ctx, "proof1", until); !seen || err != nil {
		t.Fatalf("replay on the same instance: seen %v, err %v", seen, err)
	}
	if seen, err := b.Seen(ctx, "proof2", until); seen || err != nil {
		t.Fatalf("another proof: seen %v, err %v", seen, err)
	}
	// The key lives as long as the proof could still be accepted (a
	// lifetime, so Redis's own clock does not matter): at most the minute
	// until was away when it was written.
	ttl, err := rdb.Do(ctx, "PTTL", p+"proof1").Int64()
	if err != nil || ttl <= 0 || ttl > time.Minute.Milliseconds() {
		t.Fatalf("PTTL %d (%v), want a lifetime of at most a minute", ttl, err)
	}
	// An expired proof is not written at all.
	if seen, err := a.Seen(ctx, "old", time.Now().Add(-time.Second)); seen || err != nil || keyCount(t, p+"old") != 0 {
		t.Fatalf("expired proof: seen %v, err %v", seen, err)
	}
	// Redis drops the key at its expiry: then the key is new again
	// (auth refuses such a proof for its iat before it asks).
	soon := time.Now().Add(100 * time.Millisecond)
	if seen, err := a.Seen(ctx, "short", soon); seen || err != nil {
		t.Fatalf("short: seen %v, err %v", seen, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for keyCount(t, p+"short") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the key outlived its expiry")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if seen, err := b.Seen(ctx, "short", time.Now().Add(time.Minute)); seen || err != nil {
		t.Fatalf("after expiry: seen %v, err %v", seen, err)
	}
}

func TestReplayCacheUnreachable(t *testing.T) {
	dead := redis.NewClient(&redis.Options{Network: "unix", Addr: t.TempDir() + "/none.sock", MaxRetries: -1})
	defer dead.Close()
	c := NewReplayCache(dead, "")
	if seen, err := c.Seen(context.Background(), "k", time.Now().Add(time.Minute)); err == nil || seen {
		t.Fatalf("seen %v, err %v: want an error", seen, err)
	}
	if c.prefix != DefaultReplayPrefix {
		t.Fatalf("prefix %q", c.prefix)
	}
}
