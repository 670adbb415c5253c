// Package redistest starts throwaway redis-server processes for tests: on
// a unix socket in a directory of their own, without persistence, so that
// a restart comes back empty.
package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
}

// Start starts a server in dir (which it uses for its socket and log) and
// waits until it answers PING.
func Start(dir string) (*Server, error) {
	bin, err := binary()
	if err != nil {
		return nil, err
	}
	s := &Server{Sock: filepath.Join(dir, "redis.sock"), dir: dir, bin: bin}
	s.URL = "unix://" + s.Sock
	return s, s.start()
}

func (s *Server) start() error {
	log, err := os.OpenFile(filepath.Join(s.dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	s.log = log
	s.cmd = exec.Command(s.bin, "--port", "0", "--unixsocket", s.Sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--loglevel", "warning")
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

// Restart stops the server and starts a new, empty one on the same socket.
func (s *Server) Restart() error {
	s.Stop()
	return s.start()
}

// binary finds redis-server, installing the Debian package when it is
// missing and the tests run as root (as on a fresh CI machine).
func binary() (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("redis-server is not installed (apt-get install redis-server)")
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
