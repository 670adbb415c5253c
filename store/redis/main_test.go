package redisstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// rdb is a client of the redis-server that TestMain starts on a unix
// socket in a temporary directory; every test uses its own key prefix.
var rdb *redis.Client

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	bin, err := redisServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "redisstore tests need redis-server:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "redisstore")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning")
	logPath := filepath.Join(dir, "redis.log")
	logf, err := os.Create(logPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting redis-server:", err)
		return 1
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	rdb = redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			fmt.Fprintf(os.Stderr, "redis-server did not come up: %v\n%s", err, log)
			return 1
		}
		time.Sleep(20 * time.Millisecond)
	}
	return m.Run()
}

// redisServer finds redis-server, installing the Debian package when it
// is missing and the tests run as root (as on a fresh CI machine).
func redisServer() (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("not installed (apt-get install redis-server)")
	}
	install := func() error {
		c := exec.Command("apt-get", "install", "-y", "-q", "redis-server")
		c.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		return c.Run()
	}
	if install() != nil {
		c := exec.Command("apt-get", "update", "-q")
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		if err := c.Run(); err != nil {
			return "", fmt.Errorf("apt-get update: %w", err)
		}
		if err := install(); err != nil {
			return "", fmt.Errorf("apt-get install redis-server: %w", err)
		}
	}
	return exec.LookPath("redis-server")
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
