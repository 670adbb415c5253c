package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// openListen is one subscriptions/listen request the fake server holds.
type openListen struct {
	id     mcp.ID
	filter mcp.SubscriptionFilter
	ctx    context.Context // ends when the client cancels
	end    chan struct{}   // closed by the test: answer with the listen result
}

// listenServer acknowledges each listen (agreeing to everything but
// prompts), hands it to the test, and answers it with the listen result
// when the test ends it.
func listenServer(f **fakeServer, opened chan<- *openListen) func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	return func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		if msg.Method != mcp.MethodSubscriptionsListen {
			return modernServer(ctx, msg)
		}
		var p mcp.SubscriptionsListenParams
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			return nil, err
		}
		agreed := p.Notifications
		agreed.PromptsListChanged = false
		meta := mcp.Meta{mcp.MetaKeySubscriptionID: msg.ID}
		if err := (*f).conn.Notify(ctx, mcp.NotificationSubscriptionsAcknowledged, &mcp.SubscriptionsAcknowledgedParams{Meta: meta, Notifications: agreed}); err != nil {
			return nil, err
		}
		l := &openListen{id: msg.ID, filter: p.Notifications, ctx: ctx, end: make(chan struct{})}
		opened <- l
		select {
		case <-l.end:
			return &mcp.EmptyResult{ResultType: mcp.ResultComplete, Meta: meta}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func tagged(id mcp.ID, uri string) any {
	meta := mcp.Meta{mcp.MetaKeySubscriptionID: id}
	if uri != "" {
		return &mcp.ResourceUpdatedNotificationParams{Meta: meta, URI: uri}
	}
	return &mcp.NotificationParams{Meta: meta}
}

// collect reads n notifications from s.
func collect(t testing.TB, s *client.Subscription, n int) []client.Notification {
	t.Helper()
	out := make(chan []client.Notification, 1)
	go func() {
		var got []client.Notification
		for note := range s.Notifications() {
			got = append(got, note)
			if len(got) == n {
				break
			}
		}
		out <- got
	}()
	return recv(t, out, "notifications")
}

// TestListen: the acknowledgement completes Listen with the agreed
// filter; notifications tagged with the subscription's id reach it (and
// only it), and the notification handlers and the cache as well; several
// subscriptions run at once; the server's listen result ends one
// gracefully, the context another (notifications/cancelled).
func TestListen(t *testing.T) {
	var f *fakeServer
	opened := make(chan *openListen, 4)
	tr, fs := startFake(t, listenServer(&f, opened))
	f = fs
	toolsChanged := make(chan struct{}, 8)
	c := connect(t, tr, &client.Options{
		ProtocolVersion:    mcp.Version20260728,
		Observe:            modernWire(t),
		OnToolsListChanged: func(context.Context) { toolsChanged <- struct{}{} },
	})
	ctx := testCtx(t)

	s1, err := c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	l1 := recv(t, opened, "the first listen")
	if got := s1.Filter(); !got.ToolsListChanged || got.PromptsListChanged {
		t.Errorf("acknowledged filter %+v, want tools only", got)
	}
	if s1.ID() != l1.id {
		t.Errorf("subscription id %v, request id %v", s1.ID(), l1.id)
	}
	ctx2, cancel2 := context.WithCancel(ctx)
	s2, err := c.Listen(ctx2, mcp.SubscriptionFilter{ResourceSubscriptions: []string{"x://a"}})
	if err != nil {
		t.Fatal(err)
	}
	l2 := recv(t, opened, "the second listen")

	// The tools page is cached; the change must drop it.
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	notify := func(method string, params any) {
		t.Helper()
		if err := f.conn.Notify(ctx, method, params); err != nil {
			t.Fatal(err)
		}
	}
	notify(mcp.NotificationToolsListChanged, tagged(l1.id, ""))
	notify(mcp.NotificationResourcesUpdated, tagged(l2.id, "x://a"))
	notify(mcp.NotificationToolsListChanged, tagged(l1.id, ""))
	notify(mcp.NotificationToolsListChanged, tagged(mcp.IntID(999), "")) // no such subscription

	got1 := collect(t, s1, 2)
	for _, n := range got1 {
		if n.Method != mcp.NotificationToolsListChanged {
			t.Errorf("s1 got %s", n.Method)
		}
	}
	got2 := collect(t, s2, 1)
	if got2[0].Method != mcp.NotificationResourcesUpdated || got2[0].URI != "x://a" {
		t.Errorf("s2 got %+v", got2[0])
	}
	for range 3 {
		recv(t, toolsChanged, "OnToolsListChanged")
	}
	before := len(f.requests())
	if _, err := c.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if len(f.requests()) != before+1 {
		t.Error("the tools page survived a list change delivered on a listen stream")
	}

	// The server ends s1 gracefully.
	close(l1.end)
	recv(t, s1.Done(), "s1 to end")
	if err := s1.Err(); err != nil {
		t.Errorf("s1 ended with %v, want a graceful end", err)
	}
	if n := collect(t, s1, 1); len(n) != 0 {
		t.Errorf("notifications after the end: %v", n)
	}

	// The client ends s2 with its context.
	cancel2()
	recv(t, s2.Done(), "s2 to end")
	if !errors.Is(s2.Err(), context.Canceled) {
		t.Errorf("s2 ended with %v, want context.Canceled", s2.Err())
	}
	recv(t, l2.ctx.Done(), "the server to see the cancellation")
}

// TestListenEnds: Close ends a subscription, so does the server's
// notifications/cancelled for it (gracefully), and a refused listen is
// Listen's error.
func TestListenEnds(t *testing.T) {
	var f *fakeServer
	opened := make(chan *openListen, 4)
	tr, fs := startFake(t, listenServer(&f, opened))
	f = fs
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728, CallTimeout: 50 * time.Millisecond})
	ctx := testCtx(t)

	s, err := c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	l := recv(t, opened, "the listen")
	// CallTimeout does not bound a listen.
	time.Sleep(100 * time.Millisecond)
	select {
	case <-s.Done():
		t.Fatalf("the subscription ended: %v", s.Err())
	default:
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(s.Err(), context.Canceled) {
		t.Errorf("Err after Close: %v", s.Err())
	}
	recv(t, l.ctx.Done(), "the server to see the cancellation")

	s, err = c.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	l = recv(t, opened, "the second listen")
	if err := f.conn.Notify(ctx, mcp.NotificationCancelled, &mcp.CancelledParams{RequestID: l.id, Reason: "shutting down"}); err != nil {
		t.Fatal(err)
	}
	recv(t, s.Done(), "the subscription to end")
	if err := s.Err(); err != nil {
		t.Errorf("ended by the server with %v, want nil", err)
	}

	tr2, _ := startFake(t, func(ctx context.Context, msg *jsonrpc.Message) (any, error) {
		return nil, jsonrpc.ErrMethodNotFound
	})
	c2 := connect(t, tr2, &client.Options{ProtocolVersion: mcp.Version20260728})
	if _, err := c2.Listen(ctx, mcp.SubscriptionFilter{}); err == nil {
		t.Error("a refused listen succeeded")
	}
}
