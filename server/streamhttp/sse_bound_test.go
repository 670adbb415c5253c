package streamhttp

// The 2024-11-05 transport against a client that opens its stream and
// never reads it (docs/design/legacy-sse.md, "Backlog"): the queue bound
// in count and bytes, POSTs refused once it is full (pings included),
// change notifications dropped without waiting, the memory such a
// client can make the server hold, the Origin rule of the GET that
// opens a session, and a repeated sessionId.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/internal/httpenv"
)

// gateWriter is the response of a 2024-11-05 stream whose client reads
// the endpoint event, then nothing until open is called: every later
// write blocks, as a write to a client that does not read does once the
// socket buffers are full. A write deadline (http.ResponseController)
// fails the blocked write, as it does on a net.Conn.
type gateWriter struct {
	hdr      http.Header
	gate     chan struct{} // closed by open: writes go through
	gone     chan struct{} // closed by SetWriteDeadline
	goneOnce sync.Once
	openOnce sync.Once
	wrote    chan struct{} // one signal: a write went through

	mu     sync.Mutex
	writes int
	data   []byte
}

func newGateWriter() *gateWriter {
	return &gateWriter{hdr: http.Header{}, gate: make(chan struct{}), gone: make(chan struct{}), wrote: make(chan struct{}, 1)}
}

func (g *gateWriter) Header() http.Header { return g.hdr }
func (g *gateWriter) WriteHeader(int)     {}
func (g *gateWriter) Flush()              {}
func (g *gateWriter) open()               { g.openOnce.Do(func() { close(g.gate) }) }

func (g *gateWriter) SetWriteDeadline(time.Time) error {
	g.goneOnce.Do(func() { close(g.gone) })
	return nil
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	first := g.writes == 0
	g.writes++
	g.mu.Unlock()
	if !first {
		select {
		case <-g.gone:
			return 0, errors.New("write deadline passed")
		default:
		}
		select {
		case <-g.gate:
		case <-g.gone:
			return 0, errors.New("write deadline passed")
		}
	}
	g.mu.Lock()
	g.data = append(g.data, p...)
	g.mu.Unlock()
	select {
	case g.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

// messages returns how many message events went through.
func (g *gateWriter) messages() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return bytes.Count(g.data, []byte("event: message\n"))
}

// waitMessages waits for n message events to have gone through.
func (g *gateWriter) waitMessages(t *testing.T, n int) {
	t.Helper()
	guard := time.NewTimer(httpenv.HangGuard)
	defer guard.Stop()
	for g.messages() < n {
		select {
		case <-g.wrote:
		case <-guard.C:
			t.Fatalf("%d message events went through, want %d", g.messages(), n)
		}
	}
}

// stuckSSE is a 2024-11-05 session served in process whose client does
// not read its stream.
type stuckSSE struct {
	h     *Handler
	w     *gateWriter
	id    string
	ended chan struct{} // closed when the stream's ServeHTTP has returned
}

func openStuckSSE(t *testing.T, h *Handler) *stuckSSE {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil)
	r.Host = "127.0.0.1"
	r.Header.Set("Accept", "text/event-stream")
	c := &stuckSSE{h: h, w: newGateWriter(), ended: make(chan struct{})}
	go func() { // ends with the stream: cancel below, or the session's end
		defer close(c.ended)
		h.ServeHTTP(c.w, r)
	}()
	t.Cleanup(func() {
		c.w.open()
		cancel()
		<-c.ended
	})
	select {
	case <-c.w.wrote:
	case <-c.ended:
		t.Fatalf("the stream ended at once: %s", c.w.data)
	case <-time.After(httpenv.HangGuard):
		t.Fatal("no endpoint event")
	}
	c.w.mu.Lock()
	data := string(c.w.data)
	c.w.mu.Unlock()
	_, rest, ok := strings.Cut(data, "sessionId=")
	if !ok {
		t.Fatalf("first event %q", data)
	}
	c.id, _, _ = strings.Cut(rest, "\n")
	return c
}

// post hands one message to the session in process and returns the
// recorded answer.
func (c *stuckSSE) post(body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp?sessionId="+c.id, strings.NewReader(body))
	r.Host = "127.0.0.1"
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, r)
	return w
}

// initialize makes the session ready; its answer stays in the queue.
func (c *stuckSSE) initialize(t *testing.T) {
	t.Helper()
	if w := c.post(initBody(1, "2024-11-05", `{}`)); w.Code != http.StatusAccepted {
		t.Fatalf("POST initialize: %d %s", w.Code, w.Body)
	}
	if w := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); w.Code != http.StatusAccepted {
		t.Fatalf("POST initialized: %d %s", w.Code, w.Body)
	}
}

// checkFull checks the answer to a request refused for a full queue.
func checkFull(t *testing.T, w *httptest.ResponseRecorder, id string) {
	t.Helper()
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("status %d, Retry-After %q (%s), want 429 and 1", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	m := httpenv.ParseMsg(t, w.Body.Bytes())
	if m.Error == nil || m.Error.Code != mcp.CodeRateLimited || string(m.ID) != id {
		t.Fatalf("body %s, want a %d error with id %s", w.Body, mcp.CodeRateLimited, id)
	}
}

func heapAndStacks() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// unreadFloodHeapBound is the documented bound on what 20,000 POSTs to a
// session whose stream is never read may add to the heap and stacks
// (docs/design/hardening.md, "Old SSE transport"): the default queue
// holds 256 answers of a few hundred bytes.
const unreadFloodHeapBound = 2 << 20

// TestLegacySSEUnreadStreamFlood is the attack of issue 32 (item 4):
// 20,000 tools/list POSTs from 8 clients at once to a session whose
// stream is never read. The queue takes LegacySSEQueue answers, every
// later POST is refused at once (429), no goroutine is left holding an
// answer, and the heap grows by less than unreadFloodHeapBound. Once the
// client reads, every accepted answer arrives and the session serves
// again.
func TestLegacySSEUnreadStreamFlood(t *testing.T) {
	srv := sseServer()
	h := NewHandler(srv, &Options{LegacySSE: true})
	t.Cleanup(func() { h.Close() })
	c := openStuckSSE(t, h)
	c.initialize(t)
	goroutines := runtime.NumGoroutine()
	before := heapAndStacks()

	const posters, each = 8, 2500
	var mu sync.Mutex
	accepted, refused := 0, 0
	var bad []string
	var wg sync.WaitGroup
	for p := range posters {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprint(10 + p*each + i)
				w := c.post(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`)
				mu.Lock()
				switch {
				case w.Code == http.StatusAccepted:
					accepted++
				case w.Code == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "1" && strings.Contains(w.Body.String(), `"id":`+id+`,`):
					refused++
				default:
					bad = append(bad, fmt.Sprint(w.Code, " ", w.Body.String()))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	after := heapAndStacks()
	held := runtime.NumGoroutine() - goroutines
	if len(bad) > 0 {
		t.Fatalf("%d unexpected answers, the first: %s", len(bad), bad[0])
	}
	// The initialize answer holds one place.
	if accepted != DefaultLegacySSEQueue-1 || refused != posters*each-accepted {
		t.Errorf("accepted %d, refused %d; want %d and the rest", accepted, refused, DefaultLegacySSEQueue-1)
	}
	grew := int64(after) - int64(before)
	t.Logf("heap and stacks grew by %d bytes; %d goroutines more", grew, held)
	if grew > unreadFloodHeapBound {
		t.Errorf("heap and stacks grew by %d bytes, want at most %d", grew, unreadFloodHeapBound)
	}
	if held > DefaultLegacySSEQueue {
		t.Errorf("%d goroutines more than before the flood, want at most the queue's %d", held, DefaultLegacySSEQueue)
	}
	// The client reads: the initialize answer and every accepted answer
	// arrive; the session serves a ping again.
	c.w.open()
	c.w.waitMessages(t, 1+accepted)
	if w := c.post(`{"jsonrpc":"2.0","id":"p","method":"ping"}`); w.Code != http.StatusAccepted {
		t.Fatalf("ping after reading: %d %s", w.Code, w.Body)
	}
	c.w.waitMessages(t, 2+accepted)
}

// TestLegacySSEPingWhenFull: a ping POSTed while the queue is full is
// refused at once (429), not held; once the client reads, pings are
// answered again.
func TestLegacySSEPingWhenFull(t *testing.T) {
	h := NewHandler(sseServer(), &Options{LegacySSE: true, LegacySSEQueue: 4})
	t.Cleanup(func() { h.Close() })
	c := openStuckSSE(t, h)
	c.initialize(t) // one place: the initialize answer
	for i := range 3 {
		if w := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 10+i)); w.Code != http.StatusAccepted {
			t.Fatalf("ping %d: %d %s", i, w.Code, w.Body)
		}
	}
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- c.post(`{"jsonrpc":"2.0","id":99,"method":"ping"}`) }()
	select {
	case w := <-done:
		checkFull(t, w, "99")
	case <-time.After(httpenv.HangGuard):
		t.Fatal("a ping POSTed to a full queue is held")
	}
	c.w.open()
	c.w.waitMessages(t, 4)
	if w := c.post(`{"jsonrpc":"2.0","id":100,"method":"ping"}`); w.Code != http.StatusAccepted {
		t.Fatalf("ping after reading: %d %s", w.Code, w.Body)
	}
	c.w.waitMessages(t, 5)
	if c.w.mu.Lock(); !bytes.Contains(c.w.data, []byte(`"id":100`)) {
		t.Errorf("the last ping is not answered: %s", c.w.data)
	}
	c.w.mu.Unlock()
}

// TestLegacySSEQueueBytes: once the queue holds LegacySSEQueueBytes,
// requests are refused; an answer that would take it past the bound
// while other messages wait ends the session, and its stream, even one
// stuck in a write.
func TestLegacySSEQueueBytes(t *testing.T) {
	srv := sseServer()
	big := strings.Repeat("x", 2000)
	server.AddTool(srv, &mcp.Tool{Name: "big"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) {
		return big, nil
	})
	t.Run("refused", func(t *testing.T) {
		h := NewHandler(srv, &Options{LegacySSE: true, LegacySSEQueueBytes: 100})
		t.Cleanup(func() { h.Close() })
		c := openStuckSSE(t, h)
		c.initialize(t) // its answer alone is over 100 bytes: queued
		checkFull(t, c.post(`{"jsonrpc":"2.0","id":7,"method":"ping"}`), "7")
	})
	t.Run("ends the session", func(t *testing.T) {
		h := NewHandler(srv, &Options{LegacySSE: true, LegacySSEQueueBytes: 1000})
		t.Cleanup(func() { h.Close() })
		c := openStuckSSE(t, h)
		c.initialize(t)
		if w := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big"}}`); w.Code != http.StatusAccepted {
			t.Fatalf("POST tools/call: %d %s", w.Code, w.Body)
		}
		select {
		case <-c.ended:
		case <-time.After(httpenv.HangGuard):
			t.Fatal("the stream of a session past its byte bound did not end")
		}
		if w := c.post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); w.Code != http.StatusNotFound {
			t.Errorf("POST to the ended session: %d, want 404", w.Code)
		}
	})
}

// dropLog collects, by session, the warnings of messages dropped for a
// client that does not read its stream.
type dropLog struct {
	slog.Handler
	ch chan string
}

func (d dropLog) Enabled(context.Context, slog.Level) bool { return true }
func (d dropLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "dropped a message for a 2024-11-05 client") {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "session" {
				d.ch <- a.Value.String()
			}
			return true
		})
	}
	return nil
}
func (d dropLog) WithAttrs([]slog.Attr) slog.Handler { return d }
func (d dropLog) WithGroup(string) slog.Handler      { return d }

// TestLegacySSEStuckSessionsDoNotDelayChanges is issue 32's item 5:
// with 24 sessions whose streams are not read and whose queues are full,
// AddTool returns at once (within 100 ms: nothing waits), and each stuck
// session drops the tools list_changed notification.
func TestLegacySSEStuckSessionsDoNotDelayChanges(t *testing.T) {
	const stuck = 24
	drops := make(chan string, 4*stuck)
	srv := server.New(&server.Options{Info: mcp.Implementation{Name: "sse", Version: "1"},
		Logger: slog.New(dropLog{ch: drops})})
	h := NewHandler(srv, &Options{LegacySSE: true, LegacySSEQueue: 4})
	t.Cleanup(func() { h.Close() })
	ids := make(map[string]bool)
	for range stuck {
		c := openStuckSSE(t, h)
		c.initialize(t)
		for i := 0; ; i++ {
			w := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 10+i))
			if w.Code == http.StatusTooManyRequests {
				break
			}
			if w.Code != http.StatusAccepted || i > 4 {
				t.Fatalf("ping %d: %d %s", i, w.Code, w.Body)
			}
		}
		ids[c.id] = true
	}
	start := time.Now()
	err := server.AddTool(srv, &mcp.Tool{Name: "late"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) {
		return "", nil
	})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took > 100*time.Millisecond {
		t.Errorf("AddTool took %v with %d stuck sessions, want at most 100ms", took, stuck)
	}
	guard := time.NewTimer(httpenv.HangGuard)
	defer guard.Stop()
	for len(ids) > 0 {
		select {
		case id := <-drops:
			delete(ids, id)
		case <-guard.C:
			t.Fatalf("%d stuck sessions did not drop the notification", len(ids))
		}
	}
}

// TestLegacySSEGetOrigin: a GET that would open a 2024-11-05 session
// meets the rule a POST does: on a listener beyond loopback whose Host
// is unchecked (no AllowedHosts), it needs an Origin that AllowedOrigins
// lists; without one it is refused (403) and no session is created, as
// a rebinding page's same-origin GET (which carries no Origin) must be.
func TestLegacySSEGetOrigin(t *testing.T) {
	public := &net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 8080}
	loopback := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8080}
	for _, tc := range []struct {
		name   string
		opts   Options
		local  net.Addr
		host   string
		origin string
		ok     bool
	}{
		{"public, no origin", Options{}, public, "evil.example:8080", "", false},
		{"public, no origin, no Host list but origins", Options{AllowedOrigins: []string{"https://app.example"}}, public, "mcp.example", "", false},
		{"public, allowed origin", Options{AllowedOrigins: []string{"https://app.example"}}, public, "mcp.example", "https://app.example", true},
		{"public, checked host", Options{AllowedHosts: []string{"mcp.example"}}, public, "mcp.example", "", true},
		{"loopback, no origin", Options{}, loopback, "127.0.0.1:8080", "", true},
		{"host check off", Options{DisableHostCheck: true}, public, "evil.example:8080", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := sseServer()
			opts := tc.opts
			opts.LegacySSE = true
			h := NewHandler(srv, &opts)
			t.Cleanup(func() { h.Close() })
			ctx, cancel := context.WithCancel(context.WithValue(context.Background(), http.LocalAddrContextKey, tc.local))
			defer cancel()
			r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil)
			r.Host = tc.host
			r.Header.Set("Accept", "text/event-stream")
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			w := newGateWriter()
			ended := make(chan struct{})
			go func() { defer close(ended); h.ServeHTTP(w, r) }()
			select {
			case <-w.wrote: // the endpoint event: a session
			case <-ended:
			case <-time.After(httpenv.HangGuard):
				t.Fatal("no answer")
			}
			opened := h.SessionCount() == 1
			cancel()
			w.open()
			<-ended
			if opened != tc.ok {
				t.Fatalf("session opened %v, want %v: %s", opened, tc.ok, w.data)
			}
			if !tc.ok {
				if m := httpenv.ParseMsg(t, w.data); m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest || !strings.Contains(m.Error.Message, "Forbidden") {
					t.Errorf("answer %s, want a 403's -32600 error", w.data)
				}
				if n := len(srv.Sessions()); n != 0 {
					t.Errorf("%d server sessions, want 0", n)
				}
			}
		})
	}
}

// TestLegacySSERepeatedSessionID: a POST whose query names sessionId
// twice (the same session or two) is refused with 400, before the
// message is handed to any session.
func TestLegacySSERepeatedSessionID(t *testing.T) {
	h := NewHandler(sseServer(), &Options{LegacySSE: true})
	t.Cleanup(func() { h.Close() })
	a, b := openStuckSSE(t, h), openStuckSSE(t, h)
	for _, q := range []string{"sessionId=" + a.id + "&sessionId=" + a.id, "sessionId=" + a.id + "&sessionId=" + b.id, "sessionId=nope&sessionId=" + b.id} {
		r := httptest.NewRequest(http.MethodPost, "/mcp?"+q, strings.NewReader(initBody(1, "2024-11-05", `{}`)))
		r.Host = "127.0.0.1"
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusBadRequest {
			t.Errorf("?%s: %d %s, want 400", q, w.Code, w.Body)
			continue
		}
		if m := httpenv.ParseMsg(t, w.Body.Bytes()); m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest {
			t.Errorf("?%s: body %s, want a -32600 error", q, w.Body)
		}
	}
	// Neither session received the message: the first a and b send is
	// the answer to a later initialize.
	for _, c := range []*stuckSSE{a, b} {
		c.w.open()
		if w := c.post(initBody(5, "2024-11-05", `{}`)); w.Code != http.StatusAccepted {
			t.Fatalf("POST initialize: %d %s", w.Code, w.Body)
		}
		c.w.waitMessages(t, 1)
		c.w.mu.Lock()
		first := string(c.w.data)
		c.w.mu.Unlock()
		if _, msg, _ := strings.Cut(first, "event: message\n"); !strings.HasPrefix(msg, `data: {"jsonrpc":"2.0","id":5,`) {
			t.Errorf("the session's first message: %q, want the answer to id 5", msg)
		}
	}
}

// idleWriter is the response of a 2024-11-05 stream whose client reads
// everything; it keeps the session id of the endpoint event, nothing else.
type idleWriter struct {
	hdr   http.Header
	wrote chan struct{} // a signal per write
	id    string
}

func (w *idleWriter) Header() http.Header { return w.hdr }
func (w *idleWriter) WriteHeader(int)     {}
func (w *idleWriter) Flush()              {}
func (w *idleWriter) Write(p []byte) (int, error) {
	if w.id == "" { // the endpoint event, read by the test after the signal
		_, rest, _ := bytes.Cut(p, []byte("sessionId="))
		id, _, _ := bytes.Cut(rest, []byte("\n"))
		w.id = string(id)
	}
	w.wrote <- struct{}{}
	return len(p), nil
}

// idleSSEHeapBound is the documented bound on the heap an idle
// 2024-11-05 session costs beyond what its open stream costs any HTTP
// handler (the request, the response, the goroutine serving it)
// (docs/design/hardening.md, "Old SSE transport").
const idleSSEHeapBound = 6 << 10

// TestLegacySSEIdleSessionMemory measures what an idle 2024-11-05
// session (initialized, its stream open and read, nothing to send)
// costs in heap, and in heap and stacks with the goroutine that serves
// its stream (net/http's, per connection, in a real server), beside an
// idle Streamable HTTP session and a bare open stream measured the same
// way. Beyond the bare stream, the session's heap must stay within
// idleSSEHeapBound; on 375352f a 256-slot channel made up front took
// 6 KB of it.
func TestLegacySSEIdleSessionMemory(t *testing.T) {
	const n = 1000
	srv := sseServer()
	h := NewHandler(srv, &Options{LegacySSE: true})
	t.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	open := func() {
		w := &idleWriter{hdr: http.Header{}, wrote: make(chan struct{}, 1)}
		r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil)
		r.Host = "127.0.0.1"
		r.Header.Set("Accept", "text/event-stream")
		wg.Go(func() { h.ServeHTTP(w, r) })
		httpenv.RecvT(t, w.wrote, "the endpoint event")
		c := &stuckSSE{h: h, id: w.id}
		c.initialize(t)
		httpenv.RecvT(t, w.wrote, "the initialize answer")
	}
	streamable := func() {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(initBody(1, "2025-11-25", `{}`)))
		r.Host = "127.0.0.1"
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", httpenv.AcceptBoth)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("initialize: %d %s", w.Code, w.Body)
		}
	}
	measure := func(mk func()) (heap, total float64) {
		mk() // warm whatever is made lazily
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m0)
		for range n {
			mk()
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		heap = float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / n
		total = heap + float64(int64(m1.StackInuse)-int64(m0.StackInuse))/n
		return heap, total
	}
	// What any open event stream costs here, session or not: the
	// request, the response's header and the goroutine serving it.
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr.Set("Content-Type", "text/event-stream")
		hdr.Set("Cache-Control", "no-cache")
		hdr.Set("X-Accel-Buffering", "no")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("event: endpoint\ndata: /mcp?sessionId=x\n\n"))
		<-r.Context().Done()
	})
	stream := func() {
		w := &idleWriter{hdr: http.Header{}, wrote: make(chan struct{}, 1)}
		r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/mcp", nil)
		r.Header.Set("Accept", "text/event-stream")
		wg.Go(func() { bare.ServeHTTP(w, r) })
		httpenv.RecvT(t, w.wrote, "the bare stream's event")
	}
	sh, st := measure(streamable)
	bh, bt := measure(stream)
	oh, ot := measure(open)
	t.Logf("idle session: Streamable HTTP %.0f B of heap (%.0f B with stacks); 2024-11-05 %.0f B of heap (%.0f B with its stream's goroutine), of which an open stream without a session takes %.0f B (%.0f B)",
		sh, st, oh, ot, bh, bt)
	if oh-bh > idleSSEHeapBound {
		t.Errorf("an idle 2024-11-05 session costs %.0f B of heap beyond its open stream, want at most %d", oh-bh, idleSSEHeapBound)
	}
}

// TestLegacySSESessionCap: MaxLegacySSESessions bounds the 2024-11-05
// sessions alone (503 with Retry-After, no session made), a place frees
// when a stream ends, and Streamable HTTP sessions are still admitted
// meanwhile; the defaults of the old transport's limits apply to a zero
// Options.
func TestLegacySSESessionCap(t *testing.T) {
	e := newHTTPEnv(t, sseServer(), &Options{LegacySSE: true, MaxLegacySSESessions: 2})
	a, _ := openSSE(t, e, nil)
	openSSE(t, e, nil)
	_, resp := openSSE(t, e, nil)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a third stream over MaxLegacySSESessions: %d, want 503 with Retry-After", resp.StatusCode)
	}
	if n := e.h.SessionCount(); n != 2 {
		t.Errorf("SessionCount %d, want 2", n)
	}
	e.Initialize(`{}`) // a Streamable HTTP session: not concerned
	a.close()
	waitFor(t, "the first stream's session to end", func() bool { return e.h.SessionCount() == 2 })
	openSSE(t, e, nil)

	h := NewHandler(sseServer(), nil)
	defer h.Close()
	if h.opts.MaxLegacySSESessions != DefaultMaxLegacySSESessions || h.opts.LegacySSEQueueBytes != DefaultLegacySSEQueueBytes || h.opts.LegacySSEQueue != DefaultLegacySSEQueue {
		t.Errorf("defaults: MaxLegacySSESessions %d, LegacySSEQueueBytes %d, LegacySSEQueue %d", h.opts.MaxLegacySSESessions, h.opts.LegacySSEQueueBytes, h.opts.LegacySSEQueue)
	}
}

// TestLegacySSECancelFreesPlace: a request the client cancels
// (notifications/cancelled) gives its place in the queue back, since its
// answer will not come; another request is then admitted.
func TestLegacySSECancelFreesPlace(t *testing.T) {
	srv := sseServer()
	started := make(chan struct{}, 1)
	server.AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *server.CallToolRequest, _ struct{}) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	})
	h := NewHandler(srv, &Options{LegacySSE: true, LegacySSEQueue: 3})
	t.Cleanup(func() { h.Close() })
	c := openStuckSSE(t, h)
	c.initialize(t) // one place
	if w := c.post(`{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"wait"}}`); w.Code != http.StatusAccepted {
		t.Fatalf("POST tools/call: %d %s", w.Code, w.Body)
	}
	httpenv.RecvT(t, started, "the tool to start")
	if w := c.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); w.Code != http.StatusAccepted {
		t.Fatalf("ping: %d %s", w.Code, w.Body)
	}
	checkFull(t, c.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), "2")
	if w := c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w"}}`); w.Code != http.StatusAccepted {
		t.Fatalf("POST cancelled: %d %s", w.Code, w.Body)
	}
	if w := c.post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); w.Code != http.StatusAccepted {
		t.Fatalf("ping after the cancellation: %d %s, want 202", w.Code, w.Body)
	}
}
