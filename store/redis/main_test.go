package redisstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// rdb is a client of the redis-server that TestMain starts on a unix
// socket in a temporary directory; every test uses its own key prefix.
// It is nil when redis-server is not installed: every test that uses it
// calls redistest.Need first.
var rdb *redis.Client

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "redisstore")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	srv, err := redistest.Start(dir)
	if errors.Is(err, redistest.ErrNotInstalled) && !redistest.Required() {
		// The tests that need it skip (redistest.Need); the others run.
		fmt.Fprintln(os.Stderr, "store/redis:", err)
		return m.Run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "redisstore tests need redis-server:", err)
		return 1
	}
	defer srv.Stop()
	rdb = redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Sock})
	defer rdb.Close()
	return m.Run()
}

// prefix returns a key prefix of its own for a test, with no keys under
// it at the start, and none left at the end.
func prefix(t *testing.T) string {
	p := "test:" + t.Name() + ":"
	wipe := func() {
		keys, _ := rdb.Keys(context.Background(), p+"*").Result()
		if len(keys) > 0 {
			rdb.Del(context.Background(), keys...)
		}
	}
	wipe()
	t.Cleanup(wipe)
	return p
}

// keyCount counts the keys under a prefix.
func keyCount(t *testing.T, prefix string) int {
	t.Helper()
	keys, err := rdb.Keys(context.Background(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}
