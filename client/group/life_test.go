package group_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/group"
	"github.com/mcpkit/mcpkit/intercept"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

// collect lists the tools, returning their names and the servers whose
// errors were yielded.
func collect(ctx context.Context, g *group.Group) (names, failed []string, errs []error) {
	for tool, err := range g.Tools(ctx) {
		if err != nil {
			var se *group.ServerError
			if errors.As(err, &se) {
				failed = append(failed, se.Server)
			}
			errs = append(errs, err)
			continue
		}
		names = append(names, tool.Name)
	}
	return names, failed, errs
}

// TestServerDiesMidway: a server whose connection ends while the group
// is in use is reported down, its listing yields its error while the
// others list on, and it is connected again once it can be.
func TestServerDiesMidway(t *testing.T) {
	ctx := testContext(t)
	clk := newClock()
	hosts := map[string]*host{}
	var servers []group.Server
	for _, s := range []struct{ name, version string }{{"legacy", mcp.LatestLegacy}, {"modern", mcp.Version20260728}, {"dies", mcp.LatestLegacy}} {
		h := newHost(t, newServer(t, s.name))
		hosts[s.name] = h
		servers = append(servers, group.Server{Name: s.name, Connect: h.dial, Client: &client.Options{ProtocolVersion: s.version}})
	}
	g, err := group.Connect(ctx, servers, &group.Options{Now: clk.Now, RetryMin: time.Second, RetryMax: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	if names, failed, _ := collect(ctx, g); len(names) != 3 || failed != nil {
		t.Fatalf("before: %v %v", names, failed)
	}

	// The server goes away, and cannot be reached for now.
	c, err := g.Client(ctx, "dies")
	if err != nil {
		t.Fatal(err)
	}
	hosts["dies"].refuse.Store(true)
	hosts["dies"].cut()
	<-c.Done()

	names, failed, errs := collect(ctx, g)
	if fmt.Sprint(names) != "[legacy_echo modern_echo]" || fmt.Sprint(failed) != "[dies]" || !errors.Is(errs[0], errRefused) {
		t.Fatalf("after the death: names %v failed %v errs %v", names, failed, errs)
	}
	st := g.Servers()[2]
	if st.State != group.StateDown || !errors.Is(st.Err, errRefused) || !st.NextRetry.Equal(clk.Now().Add(time.Second)) {
		t.Errorf("status %+v", st)
	}
	// The other servers still answer calls.
	if out, _, err := group.CallTool[echoOut](ctx, g, "modern_echo", echoIn{Text: "x"}); err != nil || out.Server != "modern" {
		t.Fatalf("modern_echo: %+v %v", out, err)
	}
	// Before its retry time the server is not dialled again.
	dials := hosts["dies"].dials.Load()
	if _, err := g.CallTool(ctx, &mcp.CallToolParams{Name: "dies_echo"}); !errors.Is(err, group.ErrServerDown) {
		t.Errorf("dies_echo before the retry: %v", err)
	}
	if d := hosts["dies"].dials.Load(); d != dials {
		t.Errorf("dialled %d times before the retry time", d-dials)
	}

	// It is back; past the retry time the next use connects it again.
	hosts["dies"].refuse.Store(false)
	clk.Add(time.Second)
	out, _, err := group.CallTool[echoOut](ctx, g, "dies_echo", echoIn{Text: "back"})
	if err != nil || out.Server != "dies" {
		t.Fatalf("dies_echo after the retry: %+v %v", out, err)
	}
	if st := g.Servers()[2]; st.State != group.StateReady || st.Connects != 2 || st.Err != nil {
		t.Errorf("status after the reconnection %+v", st)
	}
}

// TestRetryBackoff: failed attempts wait RetryMin, doubling up to
// RetryMax, each on the injected clock; a success resets the wait.
func TestRetryBackoff(t *testing.T) {
	ctx := testContext(t)
	clk := newClock()
	h := newHost(t, newServer(t, "s"))
	h.refuse.Store(true)
	g, err := group.Connect(ctx, []group.Server{{Name: "s", Connect: h.dial}}, &group.Options{Now: clk.Now, RetryMin: time.Second, RetryMax: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	for i, wait := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second} {
		st := g.Servers()[0]
		if got := st.NextRetry.Sub(clk.Now()); got != wait || st.State != group.StateDown {
			t.Fatalf("attempt %d: next retry in %v (state %s), want %v", i+1, got, st.State, wait)
		}
		clk.Add(wait - time.Nanosecond)
		if _, err := g.Client(ctx, "s"); !errors.Is(err, group.ErrServerDown) || !errors.Is(err, errRefused) {
			t.Fatalf("before the retry time: %v", err)
		}
		clk.Add(time.Nanosecond)
		if _, err := g.Client(ctx, "s"); errors.Is(err, group.ErrServerDown) || !errors.Is(err, errRefused) {
			t.Fatalf("at the retry time: %v", err)
		}
	}
	if d := h.dials.Load(); d != 5 {
		t.Errorf("%d dials, want 5 (Connect's and one per retry)", d)
	}
	h.refuse.Store(false)
	clk.Add(3 * time.Second)
	c, err := g.Client(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	h.refuse.Store(true)
	h.cut()
	<-c.Done()
	_, _, errs := collect(ctx, g)
	if len(errs) != 1 {
		t.Fatalf("errors %v", errs)
	}
	if st := g.Servers()[0]; st.NextRetry.Sub(clk.Now()) != time.Second {
		t.Errorf("after a success the wait starts again at RetryMin: %+v", st)
	}
}

// TestConcurrentUse calls and lists from many goroutines across servers
// of both eras while one of them is cut and reconnected, then closes the
// group under load: everything ends, nothing races.
func TestConcurrentUse(t *testing.T) {
	ctx := testContext(t)
	g, hosts := fourServers(t, &group.Options{RetryMin: time.Nanosecond, RetryMax: time.Nanosecond})
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 8 {
		wg.Go(func() {
			<-start
			for j := range 20 {
				name := []string{"legacy_echo", "modern_echo", "auto_echo"}[(i+j)%3]
				out, _, err := group.CallTool[echoOut](ctx, g, name, echoIn{Text: "c"})
				if err == nil && out.Text != "c" {
					t.Errorf("%s: %+v", name, out)
				}
				if err != nil && name != "legacy_echo" { // only legacy is cut below
					t.Errorf("%s: %v", name, err)
				}
				for _, err := range g.Tools(ctx) {
					var se *group.ServerError
					if err != nil && (!errors.As(err, &se) || (se.Server != "broken" && se.Server != "legacy")) {
						t.Errorf("listing: %v", err)
					}
				}
			}
		})
	}
	wg.Go(func() {
		<-start
		for range 5 {
			hosts["legacy"].cut()
			_ = g.Servers()
		}
	})
	close(start)
	wg.Wait()
	if err := g.Close(); err != nil {
		t.Logf("Close: %v", err) // a transport already cut may report it
	}
	if _, err := g.CallTool(ctx, &mcp.CallToolParams{Name: "modern_echo"}); !errors.Is(err, group.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	for _, st := range g.Servers() {
		if st.State != group.StateClosed {
			t.Errorf("%s: %s after Close", st.Name, st.State)
		}
	}
}

// TestCloseEndsAttempts: Close ends a connection attempt in flight (one
// that waits for its context) and returns; the caller of that attempt
// gets an error.
func TestCloseEndsAttempts(t *testing.T) {
	ctx := testContext(t)
	h := newHost(t, newServer(t, "slow"))
	h.refuse.Store(true)
	g, err := group.Connect(ctx, []group.Server{{Name: "slow", Connect: h.dial}}, &group.Options{RetryMin: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	h.mu.Lock()
	h.block = block
	h.mu.Unlock()
	called := make(chan error, 1)
	go func() { // ends when Close ends the attempt
		_, err := g.CallTool(ctx, &mcp.CallToolParams{Name: "slow_echo"})
		called <- err
	}()
	<-block // the attempt is in flight
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-called; err == nil {
		t.Fatal("the call succeeded")
	}
}

// TestListStopsEarly: a consumer that stops after the first tool stops
// the listing of every server (no further server is contacted).
func TestListStopsEarly(t *testing.T) {
	ctx := testContext(t)
	g, hosts := fourServers(t, nil)
	dials := hosts["broken"].dials.Load()
	for tool, err := range g.Tools(ctx) {
		if err != nil || tool.Server != "legacy" {
			t.Fatalf("first: %+v %v", tool, err)
		}
		break
	}
	if hosts["broken"].dials.Load() != dials {
		t.Error("the broken server was tried after the consumer stopped")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	var errs []error
	for _, err := range g.Tools(cctx) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("with an ended context: %v", errs)
	}
}

// failList is a client interceptor that fails the requests of one method.
func failList(method string) intercept.Interceptor {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, c *intercept.Call) (any, error) {
			if !c.Inbound && !c.Notification && c.Method == method {
				return nil, errFlaky
			}
			return next(ctx, c)
		}
	}
}

var errFlaky = errors.New("test: list failed")

// TestListFailsPartWay: a server whose list fails is one error in the
// merged listing, between the servers before and after it; its calls
// still work.
func TestListFailsPartWay(t *testing.T) {
	ctx := testContext(t)
	var servers []group.Server
	for _, s := range []struct{ name, version string }{{"a", mcp.LatestLegacy}, {"flaky", mcp.Version20260728}, {"b", mcp.Version20260728}} {
		h := newHost(t, newServer(t, s.name))
		o := &client.Options{ProtocolVersion: s.version}
		if s.name == "flaky" {
			o.Interceptors = []intercept.Interceptor{failList(mcp.MethodToolsList)}
		}
		servers = append(servers, group.Server{Name: s.name, Connect: h.dial, Client: o})
	}
	g, err := group.Connect(ctx, servers, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	names, failed, errs := collect(ctx, g)
	if fmt.Sprint(names) != "[a_echo b_echo]" || fmt.Sprint(failed) != "[flaky]" || !errors.Is(errs[0], errFlaky) {
		t.Fatalf("names %v failed %v errs %v", names, failed, errs)
	}
	if res, err := g.CallTool(ctx, &mcp.CallToolParams{Name: "flaky_echo", Arguments: []byte(`{"text":"ok"}`)}); err != nil || res.IsError {
		t.Errorf("flaky_echo: %+v %v", res, err)
	}
	if st := g.Servers()[1]; st.State != group.StateReady {
		t.Errorf("a failed list changed the state: %+v", st)
	}
}

// TestDiesDuringCall: a call in flight when its server's connection is
// cut fails with that server's error and is not repeated; a call to
// another server made meanwhile succeeds.
func TestDiesDuringCall(t *testing.T) {
	ctx := testContext(t)
	srv := newServer(t, "dies")
	entered := make(chan struct{}, 1)
	var calls atomic.Int32
	err := server.AddTool(srv, &mcp.Tool{Name: "hang"}, func(ctx context.Context, _ *server.CallToolRequest, _ echoIn) (echoOut, error) {
		calls.Add(1)
		entered <- struct{}{}
		<-ctx.Done()
		return echoOut{}, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	dies := newHost(t, srv)
	other := newHost(t, newServer(t, "other"))
	g, err := group.Connect(ctx, []group.Server{
		{Name: "dies", Connect: dies.dial, Client: &client.Options{ProtocolVersion: mcp.LatestLegacy}},
		{Name: "other", Connect: other.dial, Client: &client.Options{ProtocolVersion: mcp.Version20260728}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	called := make(chan error, 1)
	go func() { // ends when the cut ends the call
		_, err := g.CallTool(ctx, &mcp.CallToolParams{Name: "dies_hang", Arguments: []byte(`{"text":"x"}`)})
		called <- err
	}()
	select {
	case <-entered:
	case err := <-called:
		t.Fatalf("the call ended before the tool ran: %v", err)
	}
	if out, _, err := group.CallTool[echoOut](ctx, g, "other_echo", echoIn{Text: "meanwhile"}); err != nil || out.Text != "meanwhile" {
		t.Fatalf("other_echo: %+v %v", out, err)
	}
	c, err := g.Client(ctx, "dies")
	if err != nil {
		t.Fatal(err)
	}
	dies.refuse.Store(true)
	dies.cut()
	err = <-called
	var se *group.ServerError
	if !errors.As(err, &se) || se.Server != "dies" {
		t.Fatalf("the cut call: %v", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the tool ran %d times", n)
	}
	<-c.Done() // the call may fail just before the connection is marked ended
	st := g.Servers()[0]
	if st.State != group.StateDown {
		t.Errorf("status after the cut: %+v", st)
	}
}

// TestRefusedSubscription: a modern server whose list-change
// subscription cannot be opened is still used; the group logs why.
func TestRefusedSubscription(t *testing.T) {
	ctx := testContext(t)
	h := newHost(t, newServer(t, "m"))
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
	g, err := group.Connect(ctx, []group.Server{{Name: "m", Connect: h.dial, Client: &client.Options{
		ProtocolVersion: mcp.Version20260728,
		Interceptors:    []intercept.Interceptor{failList(mcp.MethodSubscriptionsListen)},
	}}}, &group.Options{Logger: logger, OnListChanged: func(context.Context, group.Change) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	if st := g.Servers()[0]; st.State != group.StateReady {
		t.Fatalf("status %+v", st)
	}
	mu.Lock()
	got := logs.String()
	mu.Unlock()
	if !strings.Contains(got, "no list-change subscription") || !strings.Contains(got, "server=m") {
		t.Errorf("log: %q", got)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestConnectTimeout: an attempt that does not finish within
// ConnectTimeout ends with the deadline, and the server is down.
func TestConnectTimeout(t *testing.T) {
	ctx := testContext(t)
	stuck := func(ctx context.Context) (transport.Conn, error) {
		<-ctx.Done() // a server that never answers
		return nil, ctx.Err()
	}
	g, err := group.Connect(ctx, []group.Server{{Name: "stuck", Connect: stuck}}, &group.Options{ConnectTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	st := g.Servers()
	if st[0].State != group.StateDown || !errors.Is(st[0].Err, context.DeadlineExceeded) {
		t.Errorf("stuck: %+v", st[0])
	}
}

// TestDefaults: the zero Options wait DefaultRetryMin after a failed
// attempt and join names with DefaultSeparator.
func TestDefaults(t *testing.T) {
	ctx := testContext(t)
	clk := newClock()
	h := newHost(t, newServer(t, "s"))
	h.refuse.Store(true)
	g, err := group.Connect(ctx, []group.Server{{Name: "s", Connect: h.dial}}, &group.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	if st := g.Servers()[0]; st.NextRetry.Sub(st.Since) != group.DefaultRetryMin {
		t.Errorf("first wait %v, want %v", st.NextRetry.Sub(st.Since), group.DefaultRetryMin)
	}
	if name, _ := g.Name("s", "echo"); name != "s"+group.DefaultSeparator+"echo" {
		t.Errorf("name %q", name)
	}
	for range 10 { // the wait stops doubling at DefaultRetryMax
		clk.Add(time.Hour)
		_, _ = g.Client(ctx, "s")
	}
	if st := g.Servers()[0]; st.NextRetry.Sub(st.Since) != group.DefaultRetryMax {
		t.Errorf("wait after many failures %v, want %v", st.NextRetry.Sub(st.Since), group.DefaultRetryMax)
	}
}

// TestCallerCancelNotServerFailure: an attempt ended by its caller's own
// context (Connect's here) does not count as the server's failure: the
// next caller connects at once instead of getting ErrServerDown until
// the retry time (the clock never moves).
func TestCallerCancelNotServerFailure(t *testing.T) {
	ctx := testContext(t)
	clk := newClock()
	h := newHost(t, newServer(t, "s"))
	block := make(chan struct{})
	h.mu.Lock()
	h.block = block
	h.mu.Unlock()
	cctx, cancel := context.WithCancel(ctx)
	made := make(chan *group.Group, 1)
	go func() { // ends when cancel ends the attempt
		g, err := group.Connect(cctx, []group.Server{{Name: "s", Connect: h.dial}}, &group.Options{Now: clk.Now, RetryMin: time.Hour})
		if err != nil {
			t.Error(err)
		}
		made <- g
	}()
	<-block // the attempt is in flight
	h.mu.Lock()
	h.block = nil
	h.mu.Unlock()
	cancel()
	g := <-made
	if g == nil {
		return
	}
	defer func() { _ = g.Close() }()
	if st := g.Servers()[0]; st.State != group.StateDown {
		t.Errorf("after the caller gave up: %+v, want down", st)
	}
	if _, err := g.Client(ctx, "s"); err != nil {
		t.Fatalf("the next caller: %v; want a connection (the server never failed)", err)
	}
}
