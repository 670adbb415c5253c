package interop

// Helpers of the tests against the reference servers from npm: where
// they are installed (MCPKIT_PEERS_DIR, from peers/install.sh), and how
// to start them over stdio and over HTTP.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/command"
)

// RequirePeersEnv makes missing peers a failure instead of a skip.
const requirePeersEnv = "MCPKIT_REQUIRE_PEERS"

// peers returns the folder install.sh filled: node, node_modules.
func peers(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MCPKIT_PEERS_DIR")
	if dir == "" {
		if os.Getenv(requirePeersEnv) == "1" {
			t.Fatal("MCPKIT_PEERS_DIR is not set and " + requirePeersEnv + "=1: install the reference servers with interop/peers/install.sh")
		}
		t.Skip("MCPKIT_PEERS_DIR is not set: the tests against the reference servers from npm skip (interop/peers/install.sh installs them)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node")); err != nil {
		t.Fatalf("MCPKIT_PEERS_DIR=%s has no node: %v", dir, err)
	}
	return dir
}

// peerCmd is node running the bin of an npm package of the peers folder.
func peerCmd(t *testing.T, pkg, script string, args ...string) *exec.Cmd {
	dir := peers(t)
	js := filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", script)
	return exec.Command(filepath.Join(dir, "node"), append([]string{js}, args...)...)
}

// startStdio launches a peer over stdio; the connection closes at the end
// of the test (the transport shuts the process down in spec order).
func startStdio(t *testing.T, cmd *exec.Cmd) transport.Conn {
	t.Helper()
	cmd.Stderr = io.Discard
	conn, err := command.Start(testCtx(t), cmd, nil)
	if err != nil {
		t.Fatalf("starting %s: %v", cmd, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// startHTTP launches a peer that listens on $PORT and returns its base
// URL once its log line says it listens (a line containing ready).
func startHTTP(t *testing.T, cmd *exec.Cmd, ready string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd, err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	up := make(chan struct{})
	go func() { // owned by the test: ends when the process's stderr closes
		defer close(done)
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.Contains(sc.Text(), ready) {
				close(up)
				signalled = true
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case <-up:
	case <-done:
		t.Fatalf("%s exited before listening", cmd)
	case <-time.After(hangGuard):
		t.Fatalf("%s did not say %q", cmd, ready)
	}
	return fmt.Sprintf("http://localhost:%d", port)
}
