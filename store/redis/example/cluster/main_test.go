package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// The test binary doubles as the example: with childEnv set it runs
// main with the arguments after "--".
const childEnv = "MCPKIT_CLUSTER_EXAMPLE_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{os.Args[0]}, os.Args[i+1:]...)
				break
			}
		}
		main()
		return
	}
	os.Exit(m.Run())
}

// child runs the example as its own process.
type child struct {
	cmd  *exec.Cmd
	addr string
	out  chan string // lines of stderr
	done chan struct{}
}

func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, out: make(chan string, 1000), done: make(chan struct{})}
	go func() { // owned by c: ends when the process's stderr closes
		defer close(c.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case c.out <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		<-c.done
	})
	return c
}

// waitFor reads the child's stderr until a line contains s.
func (c *child) waitFor(t *testing.T, s string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	var seen []string
	for {
		select {
		case line := <-c.out:
			if strings.Contains(line, s) {
				return line
			}
			seen = append(seen, line)
		case <-c.done:
			for line := range len(c.out) {
				_ = line
				seen = append(seen, <-c.out)
			}
			t.Fatalf("the process ended before saying %q:\n%s", s, strings.Join(seen, "\n"))
		case <-timeout:
			t.Fatalf("the process did not say %q", s)
		}
	}
}

// stateKey is a fresh MCPKIT_STATE_KEY value.
func stateKey() string {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return hex.EncodeToString(k)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestExample runs the example as it is meant to be run: Redis, three
// instance processes and the round-robin proxy. A legacy client's
// elicitation is answered across instances; then the process running a
// call is killed (SIGKILL): the call fails with a clear error and the
// session goes on on the others.
func TestExample(t *testing.T) {
	redistest.Need(t)
	redisSrv, err := redistest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer redisSrv.Stop()
	env := []string{"MCPKIT_STATE_KEY=" + stateKey()}
	var instances []*child
	var addrs []string
	for range 3 {
		addr := freeAddr(t)
		c := startChild(t, env, "instance", "-listen", addr, "-redis", redisSrv.URL)
		c.waitFor(t, "serving")
		c.addr = addr
		instances = append(instances, c)
		addrs = append(addrs, addr)
	}
	front := httptest.NewServer(newRoundRobin(addrs))
	defer front.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var logs []string
	cl, err := client.Connect(ctx, streamable.New(front.URL, nil), &client.Options{
		ProtocolVersion: mcp.LatestLegacy,
		ElicitHandler: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
		OnLog: func(_ context.Context, p *mcp.LoggingMessageParams) {
			mu.Lock()
			logs = append(logs, fmt.Sprint(p.Data))
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	res, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: "ask"})
	if err != nil || res.IsError {
		t.Fatalf("ask: %+v %v", res, err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(got, "hello Ada, from ") {
		t.Fatalf("ask: %q", got)
	}

	// A long count; find its instance from its first log line, kill it.
	errc := make(chan error, 1)
	go func() {
		_, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: []byte(`{"n":60}`)})
		errc <- err
	}()
	var victim *child
	for deadline := time.Now().Add(20 * time.Second); victim == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		for _, l := range logs {
			for _, c := range instances {
				if strings.HasPrefix(l, "1 of 60 on "+c.addr) {
					victim = c
				}
			}
		}
		mu.Unlock()
	}
	if victim == nil {
		t.Fatal("the count did not start")
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "stopped before it finished") {
			t.Fatalf("count after its instance was killed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call hangs after its instance was killed")
	}
	res, err = cl.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		t.Fatalf("the session did not survive on the other instances: %v", err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got == victim.addr {
		t.Fatalf("whoami answered by the killed instance %s", got)
	}
}

// TestRedisUnavailableAtStart: an instance whose Redis cannot be reached
// exits at once with a clear error instead of serving.
func TestRedisUnavailableAtStart(t *testing.T) {
	env := []string{"MCPKIT_STATE_KEY=" + stateKey()}
	c := startChild(t, env, "instance", "-listen", freeAddr(t), "-redis", "unix://"+t.TempDir()+"/none.sock")
	line := c.waitFor(t, "cluster:")
	if !strings.Contains(line, "unreachable") {
		t.Errorf("error line %q", line)
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the instance did not exit")
	}
	if err := c.cmd.Wait(); err == nil {
		t.Error("exit status 0")
	}
}
