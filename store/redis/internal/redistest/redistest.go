// Package redistest starts throwaway redis-server processes for tests: on
// a unix socket in a directory of their own, without persistence (a
// restart comes back empty), or durable (StartDurable: a restart keeps
// the data).
package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is one redis-server process.
type Server struct {
	Sock string // the unix socket it listens on
	URL  string // unix://<Sock>, for redis.ParseURL
	dir  string
	bin  string
	cmd  *exec.Cmd
	log  *os.File
	// durable: every write is in the append-only file before it is
	// acknowledged, so a restart (even after SIGKILL) keeps the data.
	durable bool
}

// Start starts a server in dir (which it uses for its socket and log) and
// waits until it answers PING. Without redis-server in $PATH it returns
// ErrNotInstalled; call Need first to skip instead.
func Start(dir string) (*Server, error) {
	bin, err := binary()
	if err != nil {
		return nil, err
	}
	s := &Server{Sock: filepath.Join(dir, "redis.sock"), dir: dir, bin: bin}
	s.URL = "unix://" + s.Sock
	return s, s.start()
}

// StartDurable is Start with persistence: an append-only file synced on
// every write, so that Restart brings the data back, as a production
// Redis would.
func StartDurable(dir string) (*Server, error) {
	bin, err := binary()
	if err != nil {
		return nil, err
	}
	s := &Server{Sock: filepath.Join(dir, "redis.sock"), dir: dir, bin: bin, durable: true}
	s.URL = "unix://" + s.Sock
	return s, s.start()
}

func (s *Server) start() error {
	log, err := os.OpenFile(filepath.Join(s.dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	s.log = log
	aof := []string{"--appendonly", "no"}
	if s.durable {
		aof = []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	s.cmd = exec.Command(s.bin, append([]string{"--port", "0", "--unixsocket", s.Sock, "--unixsocketperm", "700",
		"--save", "", "--dir", s.dir, "--loglevel", "warning"}, aof...)...)
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting redis-server: %w", err)
	}
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: s.Sock, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			out, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			return fmt.Errorf("redis-server did not come up: %v\n%s", err, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.log.Close()
	s.cmd = nil
	_ = os.Remove(s.Sock)
}

// Restart stops the server and starts a new one on the same socket:
// empty, unless the server is durable (StartDurable).
func (s *Server) Restart() error {
	s.Stop()
	return s.start()
}

// RequireEnv names the environment variable that, set to 1, makes a
// missing redis-server a test failure instead of a skip. CI sets it.
const RequireEnv = "MCPKIT_REQUIRE_REDIS"

// ErrNotInstalled is the error when redis-server is not in $PATH. The
// tests never install it: .ci/run does, on CI machines.
var ErrNotInstalled = errors.New("redis-server not found in $PATH (Debian package redis-server); " +
	"tests that need it skip, or fail with " + RequireEnv + "=1")

// Required reports whether $MCPKIT_REQUIRE_REDIS asks for redis-server.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Need skips t with one line when redis-server is not installed, or fails
// it when $MCPKIT_REQUIRE_REDIS=1.
func Need(t testing.TB) {
	t.Helper()
	if _, err := binary(); err != nil {
		if Required() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// binary finds redis-server in $PATH.
func binary() (string, error) {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", ErrNotInstalled
	}
	return p, nil
}
