package redisstore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// tripCounter is a redis.Hook that counts what a client sends: each
// command on its own, and each round trip (one command, or one pipeline
// or transaction, whatever its length) separately. Connection set-up
// (HELLO, CLIENT SETINFO) does not pass through the hooks.
type tripCounter struct {
	mu    sync.Mutex
	trips int
	cmds  []string
	// gotGet, when set (afterGet), is closed once the next GET has its
	// answer.
	gotGet chan struct{}
}

// afterGet returns a channel closed once the next GET sent has been
// answered.
func (c *tripCounter) afterGet() <-chan struct{} {
	ch := make(chan struct{})
	c.mu.Lock()
	c.gotGet = ch
	c.mu.Unlock()
	return ch
}

func (c *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if connSetUp([]redis.Cmder{cmd}) {
			return next(ctx, cmd)
		}
		c.mu.Lock()
		c.trips++
		c.cmds = append(c.cmds, cmdName(cmd))
		c.mu.Unlock()
		err := next(ctx, cmd)
		if strings.EqualFold(cmd.Name(), "get") {
			c.mu.Lock()
			ch := c.gotGet
			c.gotGet = nil
			c.mu.Unlock()
			if ch != nil {
				close(ch)
			}
		}
		return err
	}
}

func (c *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if connSetUp(cmds) {
			return next(ctx, cmds)
		}
		c.mu.Lock()
		c.trips++
		for _, cmd := range cmds {
			c.cmds = append(c.cmds, cmdName(cmd))
		}
		c.mu.Unlock()
		return next(ctx, cmds)
	}
}

func cmdName(cmd redis.Cmder) string {
	n := strings.ToUpper(cmd.Name())
	if n == "EVALSHA" || n == "EVAL" {
		// Which script: by its hash.
		if a := cmd.Args(); len(a) > 1 {
			for name, sc := range scriptNames {
				if a[1] == sc.Hash() {
					return n + "(" + name + ")"
				}
			}
		}
	}
	return n
}

var scriptNames = map[string]*redis.Script{
	"append": appendScript, "purge": purgeScript, "take": takeScript, "cas": casScript, "load": loadScript,
}

// connSetUp reports whether cmds are the commands a new connection
// sends before its first (HELLO, CLIENT SETINFO): not the operation's.
func connSetUp(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		switch strings.ToUpper(c.Name()) {
		case "HELLO", "CLIENT", "AUTH", "SELECT":
		default:
			return false
		}
	}
	return len(cmds) > 0
}

// reset forgets what was counted.
func (c *tripCounter) reset() {
	c.mu.Lock()
	c.trips, c.cmds = 0, nil
	c.mu.Unlock()
}

// take returns the round trips and commands counted since reset, and
// resets.
func (c *tripCounter) take() (trips int, cmds []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	trips, cmds = c.trips, c.cmds
	c.trips, c.cmds = 0, nil
	return trips, cmds
}

// countingClient returns a client of the test redis-server whose
// commands c counts.
func countingClient(t *testing.T, c *tripCounter) *redis.Client {
	t.Helper()
	o := rdb.Options()
	cl := redis.NewClient(&redis.Options{Network: o.Network, Addr: o.Addr})
	cl.AddHook(c)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// rtInstances are n instances sharing Redis through one counted client:
// sessions, events, tasks and a broker each.
type rtInstances struct {
	urls    []string
	servers []*server.Server
	release chan struct{} // closed: the "wait" tool returns
	// clock is the instances' clock: it stands still unless the test
	// moves it, so that no session copy reads the store again
	// (streamhttp SessionCheckInterval) because the machine was slow.
	clock *manualClock
}

func newRTInstances(t *testing.T, cl *redis.Client, p string, n int) *rtInstances {
	t.Helper()
	in := &rtInstances{release: make(chan struct{}), clock: &manualClock{now: time.Unix(1_000_000, 0)}}
	sessions := NewSessionStore(cl, &SessionStoreOptions{Prefix: p})
	events := NewEventStore(cl, &EventStoreOptions{Prefix: p})
	tasks := NewTaskStore(cl, &TaskStoreOptions{Prefix: p})
	for range n {
		br, err := NewBroker(context.Background(), cl, &BrokerOptions{Prefix: p})
		if err != nil {
			t.Fatal(err)
		}
		// A lease far longer than the test: no heartbeat lands among
		// the commands counted.
		s := server.New(&server.Options{TaskStore: tasks, TaskLease: time.Hour, Logging: true})
		type echoIn struct {
			Text string `json:"text"`
		}
		server.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallToolRequest, in echoIn) (string, error) {
			return in.Text, nil
		})
		release := in.release
		server.AddTool(s, &mcp.Tool{Name: "log"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
			_ = req.Log(ctx, mcp.LevelError, "rt", "a line")
			return "ok", nil
		})
		server.AddTool(s, &mcp.Tool{Name: "wait", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}},
			func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) {
				select {
				case <-release:
					return "done", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			})
		h := streamhttp.NewHandler(s, &streamhttp.Options{SessionStore: sessions, EventStore: events, Broker: br, Now: in.clock.Now})
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			ts.Close()
			h.Close()
			_ = s.Shutdown(context.Background())
			_ = br.Close()
		})
		in.urls = append(in.urls, ts.URL)
		in.servers = append(in.servers, s)
	}
	return in
}

// do sends one request and reads the whole answer.
func rtDo(t *testing.T, method, url, sid, body string, hdr ...string) (*http.Response, string) {
	t.Helper()
	resp := rtOpen(t, method, url, sid, body, hdr...)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

// rtPlain posts body on session sid of url with no testing.T (from a
// goroutine of a test) and returns the answer's body, or why not.
func rtPlain(url, sid, body string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", mcp.Version20251125)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %s: %s", resp.Status, out)
	}
	return string(out), err
}

// rtOpen sends one request and returns the answer unread.
func rtOpen(t *testing.T, method, url, sid, body string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", mcp.Version20251125)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// rtSession initializes a legacy session on url.
func rtSession(t *testing.T, url string) string {
	t.Helper()
	resp, body := rtDo(t, http.MethodPost, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rt","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("no session: %s %s", resp.Status, body)
	}
	if resp, body := rtDo(t, http.MethodPost, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %s %s", resp.Status, body)
	}
	return sid
}

// waitLine reads an SSE body until a line containing want.
func waitLine(t *testing.T, r *bufio.Reader, want string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if strings.Contains(line, want) {
			return
		}
		if err != nil {
			t.Fatalf("stream ended before %q: %v", want, err)
		}
	}
}
