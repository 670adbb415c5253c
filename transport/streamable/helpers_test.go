package streamable

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/internal/sse"
	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestMain fails the package if any goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// hangGuard bounds every wait of a test; it is never a synchronisation.
const hangGuard = 20 * time.Second

const initResult = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"fake","version":"1.0.0"}}`

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

// recv receives one value from ch, failing the test at the hang guard.
func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// rec is one request the fake server received.
type rec struct {
	Method string
	Header http.Header
	Body   []byte
	Msg    *jsonrpc.Message // the decoded body of a POST
	At     time.Time        // arrival
}

func (r rec) String() string {
	if r.Msg != nil {
		return r.Method + " " + r.Msg.String()
	}
	return r.Method
}

// fake is a hand-written MCP server on a loopback listener: the test's
// handler controls every byte; every request is recorded first.
type fake struct {
	*httptest.Server
	reqs chan rec // every request, in arrival order

	mu  sync.Mutex
	all []rec
}

type handlerFunc func(w http.ResponseWriter, r *http.Request, in rec)

func newFake(t testing.TB, h handlerFunc) *fake {
	t.Helper()
	f := &fake{reqs: make(chan rec, 1000)}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		in := rec{Method: r.Method, Header: r.Header.Clone(), Body: body, At: time.Now()}
		if r.Method == http.MethodPost {
			m, derr := wire.Decode(body, jsonrpc.Limits{})
			if derr != nil {
				t.Errorf("the client POSTed an invalid message %q: %v", body, derr)
				http.Error(w, "bad", http.StatusBadRequest)
				return
			}
			in.Msg = m
		}
		f.mu.Lock()
		f.all = append(f.all, in)
		f.mu.Unlock()
		f.reqs <- in
		h(w, r, in)
	}))
	t.Cleanup(f.Close)
	return f
}

// count returns how many requests of an HTTP method arrived.
func (f *fake) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.all {
		if r.Method == method {
			n++
		}
	}
	return n
}

// of returns the requests of an HTTP method, in arrival order.
func (f *fake) of(method string) []rec {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []rec
	for _, r := range f.all {
		if r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

// next returns the next request of an HTTP method (others are skipped).
func (f *fake) next(t testing.TB, method string) rec {
	t.Helper()
	for {
		r := recv(t, f.reqs, "a "+method+" request")
		if r.Method == method {
			return r
		}
	}
}

// newConn returns a Conn to f, closed at the end of the test (before f).
func newConn(t testing.TB, f *fake, opts *Options) *Conn {
	c := New(f.URL, opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func result(id mcp.ID, res string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, res)
}

func rpcError(id mcp.ID, code int, msg string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
}

// answerInit answers initialize with a session id (none when "").
func answerInit(w http.ResponseWriter, in rec, session string) {
	if session != "" {
		w.Header().Set("Mcp-Session-Id", session)
	}
	writeJSON(w, http.StatusOK, result(in.Msg.ID, initResult))
}

// sseStart writes the headers of an event stream.
func sseStart(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flush(w)
}

// sseEvent writes one event (id and retry when set) and flushes it.
func sseEvent(w http.ResponseWriter, id string, retry time.Duration, data string) {
	_, _ = w.Write(sse.AppendEvent(nil, id, retry, []byte(data)))
	flush(w)
}

// sseRaw writes raw event-stream text and flushes it.
func sseRaw(w http.ResponseWriter, s string) {
	_, _ = io.WriteString(w, s)
	flush(w)
}

func flush(w http.ResponseWriter) { _ = http.NewResponseController(w).Flush() }

// hold blocks the handler until the client goes away.
func hold(r *http.Request) { <-r.Context().Done() }

// readMsg reads one message from c and decodes it.
func readMsg(t testing.TB, c *Conn) *jsonrpc.Message {
	t.Helper()
	type out struct {
		data []byte
		err  error
	}
	ch := make(chan out, 1)
	go func() {
		data, err := c.Read(context.Background())
		ch <- out{data, err}
	}()
	o := recv(t, ch, "a message from Read")
	if o.err != nil {
		t.Fatalf("Read: %v", o.err)
	}
	m, derr := wire.Decode(o.data, jsonrpc.Limits{})
	if derr != nil {
		t.Fatalf("Read returned an invalid message %q: %v", o.data, derr)
	}
	return m
}

func mustWrite(t testing.TB, c *Conn, msg string) {
	t.Helper()
	if err := c.Write(testCtx(t), transport.Message{Data: []byte(msg)}); err != nil {
		t.Fatalf("Write(%.60s): %v", msg, err)
	}
}

func request(id mcp.ID, method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, id, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params)
}

func notification(method string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q}`, method)
}

// waitListener waits for the listener to stop and returns why.
func waitListener(t testing.TB, c *Conn) error {
	t.Helper()
	done := c.listenerDone()
	if done == nil {
		t.Fatal("no listener was started")
	}
	recv(t, done, "the listener to stop")
	running, stopped := c.ListenerStatus()
	if running {
		t.Error("ListenerStatus reports running after the listener's goroutine exited")
	}
	return stopped
}

// closeConn closes c, failing the test at the hang guard if Close does
// not return: what Close must not wait out (a held stream, a long retry:
// delay, a DELETE that hangs) would take far longer or for ever.
func closeConn(t testing.TB, c *Conn) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- c.Close() }()
	return recv(t, errc, "Close to return")
}

// hijackCut answers with the start of a chunked event stream carrying
// events, then cuts the TCP connection mid-stream.
func hijackCut(t testing.TB, w http.ResponseWriter, events string) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	defer conn.Close()
	bw := bufio.NewWriter(conn)
	fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
	fmt.Fprintf(bw, "%x\r\n%s\r\n", len(events), events)
	_ = bw.Flush()
	_ = buf
}

func isClosed(err error) bool { return errors.Is(err, transport.ErrClosed) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
