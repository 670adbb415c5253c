//go:build unix

package gateway

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	ossignal "os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/stdio"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// The upstream processes of the multi-client tests: the test binary run
// again with upstreamEnv set ("stdio", "http", "sse" or "modern") serves
// procServer on stdio or on a loopback HTTP port (printed on stdout as
// "addr URL"; it serves until its stdin closes). Each tool reports on
// stderr, one line each ("start WHO", "outcome WHO ..."), which the tests
// read as events. Gates are FIFOs: a tool blocks reading one until the
// test writes a byte.
const upstreamEnv = "MCPKIT_GATEWAY_TEST_UPSTREAM"

func TestMain(m *testing.M) {
	if mode := os.Getenv(upstreamEnv); mode != "" {
		os.Exit(runUpstream(mode))
	}
	os.Exit(m.Run())
}

type holdIn struct {
	Who  string `json:"who"`
	Gate string `json:"gate,omitzero"`
}

// event reports one line on stderr (one write: lines of processes sharing
// a pipe do not interleave).
func event(format string, args ...any) {
	os.Stderr.WriteString(fmt.Sprintf(format, args...) + "\n")
}

// waitGate blocks until the gate has a byte, or done closes (false).
func waitGate(path string, done <-chan struct{}) bool {
	got := make(chan bool, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			got <- false
			return
		}
		defer f.Close()
		var b [1]byte
		_, err = f.Read(b[:])
		got <- err == nil
	}()
	select {
	case ok := <-got:
		return ok
	case <-done:
		return false
	}
}

// procServer has four tools. hold logs "start WHO", waits for its gate
// ignoring cancellation (as a server that ignores notifications/cancelled
// does), then logs "secret WHO" and asks "question WHO" on the legacy
// request, and reports the outcome. ask logs and asks at once. slow logs
// "start WHO" and waits for its gate or its cancellation. report (task
// optional) reports progress 1 to 3 and logs "working WHO".
func procServer(done <-chan struct{}) *server.Server {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "proc", Version: "1"}, Logging: true})
	form, _ := server.FormFor[nameForm]()
	server.AddTool(s, &mcp.Tool{Name: "hold"}, func(ctx context.Context, req *server.CallToolRequest, in holdIn) (echoOut, error) {
		bg := context.WithoutCancel(ctx)
		req.Log(bg, mcp.LevelInfo, "proc", "start "+in.Who)
		event("start %s", in.Who)
		if !waitGate(in.Gate, done) {
			event("outcome %s connection ended", in.Who)
			return echoOut{}, errors.New("ended")
		}
		req.Log(bg, mcp.LevelInfo, "proc", "secret "+in.Who)
		res, err := req.Elicit(bg, &mcp.ElicitParams{Message: "question " + in.Who, RequestedSchema: form})
		if err != nil {
			event("outcome %s error %v", in.Who, err)
			return echoOut{}, err
		}
		event("outcome %s answered %v", in.Who, res.Content["name"])
		return echoOut{Text: fmt.Sprint(res.Content["name"])}, nil
	})
	server.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *server.CallToolRequest, in holdIn) (echoOut, error) {
		req.Log(ctx, mcp.LevelInfo, "proc", "ask "+in.Who)
		f, err := server.Ask[nameForm](req.Request, "q", "question "+in.Who)
		if err != nil {
			return echoOut{}, err
		}
		return echoOut{Text: "answer " + in.Who + " " + f.Name}, nil
	})
	server.AddTool(s, &mcp.Tool{Name: "report", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}}, func(ctx context.Context, req *server.CallToolRequest, in holdIn) (echoOut, error) {
		for i := 1; i <= 3; i++ {
			if err := req.Progress(ctx, float64(i), 3, "step "+in.Who); err != nil {
				return echoOut{}, err
			}
		}
		req.Log(ctx, mcp.LevelInfo, "proc", "working "+in.Who)
		return echoOut{Text: "reported " + in.Who}, nil
	})
	server.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *server.CallToolRequest, in holdIn) (echoOut, error) {
		req.Log(ctx, mcp.LevelInfo, "proc", "start "+in.Who)
		event("start %s", in.Who)
		stop := make(chan struct{})
		defer close(stop)
		gone := make(chan struct{})
		go func() {
			select {
			case <-ctx.Done():
			case <-done:
			case <-stop:
			}
			close(gone)
		}()
		if !waitGate(in.Gate, gone) {
			return echoOut{}, errors.New("cancelled")
		}
		return echoOut{Text: "done " + in.Who}, nil
	})
	return s
}

// runUpstream is the upstream process's main.
func runUpstream(mode string) int {
	done := make(chan struct{})
	sigs := make(chan os.Signal, 1)
	ossignal.Notify(sigs, syscall.SIGTERM)
	go func() {
		<-sigs
		event("exit %d", os.Getpid())
		os.Exit(0)
	}()
	if mode == "stdio" {
		// The end of stdin (the gateway retired the connection) ends the
		// tools waiting for a gate too.
		in := &eofReader{r: os.Stdin, eof: done}
		procServer(done).Serve(context.Background(), stdio.NewConn(in, os.Stdout, nil))
		event("exit %d", os.Getpid())
		return 0
	}
	s := procServer(done)
	var h http.Handler = streamhttp.NewHandler(s, &streamhttp.Options{LegacySSE: mode == "sse"})
	if mode == "sse" {
		// Only the 2024-11-05 transport: a POST to the endpoint itself is
		// refused, as an old server does, so the client falls back.
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Query().Get("sessionId") == "" {
				http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("addr http://%s/mcp\n", ln.Addr())
	go http.Serve(ln, h)
	io.Copy(io.Discard, os.Stdin)
	close(done)
	return 0
}

type eofReader struct {
	r    io.Reader
	eof  chan struct{}
	once sync.Once
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.once.Do(func() { close(e.eof) })
	}
	return n, err
}

// events collects the lines of the upstream processes' stderr.
type events struct {
	mu      sync.Mutex
	buf     []byte
	lines   []string
	changed chan struct{}
}

func newEvents() *events { return &events{changed: make(chan struct{})} }

func (e *events) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buf = append(e.buf, p...)
	for {
		i := strings.IndexByte(string(e.buf), '\n')
		if i < 0 {
			break
		}
		e.lines = append(e.lines, string(e.buf[:i]))
		e.buf = e.buf[i+1:]
	}
	close(e.changed)
	e.changed = make(chan struct{})
	return len(p), nil
}

// wait returns the first line with prefix, waiting for it.
func (e *events) wait(t *testing.T, ctx context.Context, prefix string) string {
	t.Helper()
	for {
		e.mu.Lock()
		for _, l := range e.lines {
			if strings.HasPrefix(l, prefix) {
				e.mu.Unlock()
				return l
			}
		}
		ch := e.changed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no event %q; got %q", prefix, e.all())
		}
	}
}

func (e *events) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.lines...)
}

// upstreamKind is one kind of upstream process and how the gateway
// reaches it.
type upstreamKind struct {
	name    string
	mode    string // upstreamEnv
	version string // Upstream.ProtocolVersion
}

var upstreamKinds = []upstreamKind{
	{"stdio", "stdio", mcp.LatestLegacy},
	{"streamable", "http", mcp.LatestLegacy},
	{"sse", "sse", mcp.LatestLegacy},
	{"modern", "http", mcp.Version20260728},
}

// startUpstream configures an upstream process of kind k: the gateway
// launches a command, or the test launches the HTTP server.
func startUpstream(t *testing.T, k upstreamKind, ev *events) Upstream {
	t.Helper()
	self, err := os.Executable()
	must(t, err)
	u := Upstream{Name: "p", ProtocolVersion: k.version, HealthInterval: -1}
	if k.mode == "stdio" {
		u.Command = []string{self}
		u.Env = []string{upstreamEnv + "=stdio"}
		u.Stderr = ev
		return u
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), upstreamEnv+"="+k.mode)
	cmd.Stderr = ev
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("upstream process: %v (%q)", err, ev.all())
	}
	u.URL = strings.TrimSpace(strings.TrimPrefix(line, "addr "))
	return u
}

// newGate makes a FIFO tools wait on; each call of open lets one through.
func newGate(t *testing.T, name string) (path string, open func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), name)
	must(t, syscall.Mkfifo(path, 0o600))
	// Opened read-write, the FIFO never blocks this side, and the tool's
	// open for reading does not wait for a writer either.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	must(t, err)
	t.Cleanup(func() { f.Close() })
	// Each call lets one waiting tool through.
	return path, func() { f.Write([]byte{1}) }
}

// serveGateway serves g on loopback Streamable HTTP (and old SSE); a
// request's X-Test-User header becomes its principal.
func serveGateway(t *testing.T, g *Gateway) string {
	h := streamhttp.NewHandler(g.Server(), &streamhttp.Options{LegacySSE: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := r.Header.Get("X-Test-User"); u != "" {
			r = r.WithContext(server.WithPrincipal(r.Context(), u))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL + "/mcp"
}

// downstream is one client of the gateway: what it heard.
type downstream struct {
	c        *client.Client
	mu       sync.Mutex
	logs     []string
	asked    []string
	logCh    chan string
	answerAs string
}

func (d *downstream) heard() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(append(append([]string(nil), d.logs...), d.asked...), "|")
}

// connectClient connects a client of era to the gateway at url, as user
// (a principal; "" for none). It answers elicitations with answerAs.
func connectClient(t *testing.T, ctx context.Context, url string, era client.Era, user, answerAs string, manual bool) *downstream {
	t.Helper()
	d := &downstream{logCh: make(chan string, 64), answerAs: answerAs}
	var hdr http.Header
	if user != "" {
		hdr = http.Header{"X-Test-User": {user}}
	}
	tr := streamable.New(url, &streamable.Options{Header: hdr})
	c, err := client.Connect(ctx, tr, &client.Options{
		ProtocolVersion: version(era),
		ManualInput:     manual,
		ElicitHandler: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			d.mu.Lock()
			d.asked = append(d.asked, p.Message)
			d.mu.Unlock()
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": d.answerAs}}, nil
		},
		OnLog: func(_ context.Context, m *mcp.LoggingMessageParams) {
			s := fmt.Sprint(m.Data)
			d.mu.Lock()
			d.logs = append(d.logs, s)
			d.mu.Unlock()
			select {
			case d.logCh <- s:
			default:
			}
		},
	})
	must(t, err)
	t.Cleanup(func() { c.Close() })
	must(t, c.SetLoggingLevel(ctx, mcp.LevelDebug))
	d.c = c
	return d
}

// waitLog waits until the client heard log line want.
func (d *downstream) waitLog(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	for {
		select {
		case got := <-d.logCh:
			if got == want {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no log %q; heard %q", want, d.heard())
		}
	}
}

func callTool(ctx context.Context, c *client.Client, name string, in holdIn) (*mcp.CallToolResult, error) {
	args := fmt.Sprintf(`{"who":%q,"gate":%q}`, in.Who, in.Gate)
	return c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: []byte(args)})
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return ""
	}
	var out echoOut
	if json.Unmarshal([]byte(tc.Text), &out) != nil {
		return tc.Text
	}
	return out.Text
}
