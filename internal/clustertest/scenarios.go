package clustertest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Run checks every scenario, each on a cluster of its own from
// newCluster.
func Run(t *testing.T, newCluster func(t *testing.T) *Cluster) {
	t.Run("LegacyElicitationAnsweredElsewhere", func(t *testing.T) { LegacyElicitation(t, newCluster(t)) })
	t.Run("ResumeElsewhere", func(t *testing.T) { ResumeElsewhere(t, newCluster(t)) })
	t.Run("Delete", func(t *testing.T) { Delete(t, newCluster(t)) })
	t.Run("ModernRetryElsewhere", func(t *testing.T) { ModernRetry(t, newCluster(t)) })
	t.Run("ListenFanOut", func(t *testing.T) { ListenFanOut(t, newCluster(t)) })
	t.Run("LegacyNotificationsElsewhere", func(t *testing.T) { LegacyNotifications(t, newCluster(t)) })
	t.Run("SessionMessageElsewhere", func(t *testing.T) { SessionMessage(t, newCluster(t)) })
	t.Run("InstanceKilledMidCall", func(t *testing.T) { KilledMidCall(t, newCluster(t)) })
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Greet answers the "ask" tool's elicitation with the name Ada.
func Greet(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
}

// Connect connects a client to the cluster through the proxy; it is closed
// when the test ends.
func Connect(t *testing.T, c *Cluster, opts *client.Options) *client.Client {
	t.Helper()
	cl, err := client.Connect(testCtx(t), streamable.New(c.URL, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// Text returns the text of a successful tool result.
func Text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("result: %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("result: %+v", res)
	}
	return tc.Text
}

// LegacyElicitation checks that a legacy session's tools/call runs the legacy shim
// on one instance, whose elicitation/create the client answers with a
// POST that the proxy hands to another instance.
func LegacyElicitation(t *testing.T, c *Cluster) {
	cl := Connect(t, c, &client.Options{ProtocolVersion: mcp.LatestLegacy, ElicitHandler: Greet})
	res, err := cl.CallTool(testCtx(t), &mcp.CallToolParams{Name: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Text(t, res); got != "hello Ada" {
		t.Fatalf("got %q", got)
	}
	call, answer := -1, -1
	for _, h := range c.Hits() {
		switch h.What {
		case mcp.MethodToolsCall:
			call = h.Node
		case "response":
			answer = h.Node
		}
	}
	if call < 0 || answer < 0 || call == answer {
		t.Fatalf("the call ran on instance %d and the answer went to %d: want two instances (%+v)", call, answer, c.Hits())
	}
}

// ResumeElsewhere is the scenario where the tool closes its SSE
// connection mid-call; the client resumes with Last-Event-ID on another instance, which relays the
// rest of the stream live from the instance running the tool.
func ResumeElsewhere(t *testing.T, c *Cluster) {
	var mu sync.Mutex
	var logs []string
	cl := Connect(t, c, &client.Options{ProtocolVersion: mcp.LatestLegacy, OnLog: func(_ context.Context, p *mcp.LoggingMessageParams) {
		mu.Lock()
		logs = append(logs, fmt.Sprint(p.Data))
		mu.Unlock()
	}})
	res, err := cl.CallTool(testCtx(t), &mcp.CallToolParams{Name: "poll"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Text(t, res); got != "polled" {
		t.Fatalf("got %q", got)
	}
	// Notification handlers run on their own: wait for the second log.
	var got string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		got = strings.Join(logs, ",")
		mu.Unlock()
		if len(got) >= len("first,second") || time.Now().After(deadline) {
			break
		}
	}
	if got != "first,second" {
		t.Errorf("logs %s, want first then second, once each", got)
	}
	call, resume := -1, -1
	for _, h := range c.Hits() {
		if h.What == mcp.MethodToolsCall {
			call = h.Node
		}
		if h.Method == http.MethodGet && call >= 0 && resume < 0 && h.Node != call {
			resume = h.Node
		}
	}
	if resume < 0 {
		t.Fatalf("no GET reached an instance other than the call's %d: %+v", call, c.Hits())
	}
}

// Delete checks that DELETE on one instance ends the session on all of them.
func Delete(t *testing.T, c *Cluster) {
	conn := streamable.New(c.URL, nil)
	cl, err := client.Connect(testCtx(t), conn, &client.Options{ProtocolVersion: mcp.LatestLegacy})
	if err != nil {
		t.Fatal(err)
	}
	sid := conn.SessionID()
	for range len(c.Nodes) { // the session is known everywhere
		if _, err := cl.ListTools(testCtx(t), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	// The other instances hear of the DELETE through the broker, a moment
	// after it was answered (streamhttp TestSessionCopyDeleteElsewhere);
	// past SessionCheckInterval each asks the store, which no longer has
	// the session, whether or not that message has come.
	c.Advance(streamhttp.DefaultSessionCheckInterval)
	for _, n := range c.Nodes {
		req, _ := http.NewRequest(http.MethodPost, n.ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("instance %d answered %s for the deleted session, want 404", n.Index, resp.Status)
		}
	}
}

// ModernRetry checks that a 2026-07-28 call answered input-required on one instance
// is retried, with the sealed requestState, on another.
func ModernRetry(t *testing.T, c *Cluster) {
	cl := Connect(t, c, &client.Options{ProtocolVersion: mcp.Version20260728, ElicitHandler: Greet})
	res, err := cl.CallTool(testCtx(t), &mcp.CallToolParams{Name: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Text(t, res); got != "hello Ada" {
		t.Fatalf("got %q", got)
	}
	var calls []int
	for _, h := range c.Hits() {
		if h.What == mcp.MethodToolsCall {
			calls = append(calls, h.Node)
		}
	}
	if len(calls) != 2 || calls[0] == calls[1] {
		t.Fatalf("tools/call rounds on instances %v: want two rounds on two instances", calls)
	}
}

// ListenFanOut checks that subscriptions/listen streams on every instance hear a
// tool list change and a resource update made on one instance.
func ListenFanOut(t *testing.T, c *Cluster) {
	var subs []*client.Subscription
	for range len(c.Nodes) { // round robin: one listen stream per instance
		cl := Connect(t, c, &client.Options{ProtocolVersion: mcp.Version20260728})
		s, err := cl.Listen(testCtx(t), mcp.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"test://r"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		subs = append(subs, s)
	}
	listeners := map[int]bool{}
	for _, h := range c.Hits() {
		if h.What == mcp.MethodSubscriptionsListen {
			listeners[h.Node] = true
		}
	}
	if len(listeners) != len(c.Nodes) {
		t.Fatalf("listen streams on instances %v, want all %d", listeners, len(c.Nodes))
	}
	origin := c.Nodes[0].Server
	if err := server.AddTool(origin, &mcp.Tool{Name: "late"}, func(ctx context.Context, req *server.CallToolRequest, _ struct{}) (string, error) { return "", nil }); err != nil {
		t.Fatal(err)
	}
	origin.ResourceUpdated("test://r")
	for i, s := range subs {
		want := []string{mcp.NotificationToolsListChanged, mcp.NotificationResourcesUpdated}
		for n := range s.Notifications() {
			if n.Method != want[0] {
				t.Errorf("listen stream %d: %s, want %s (in the order made)", i, n.Method, want[0])
				continue
			}
			if want = want[1:]; len(want) == 0 {
				break
			}
		}
		if len(want) > 0 {
			t.Errorf("listen stream %d did not get %v (err %v)", i, want, s.Err())
		}
	}
}

// LegacyNotifications checks that a legacy session subscribed to a resource on one
// instance holds its GET stream on another; the resource changes on a
// third, and the notification arrives on the GET stream.
func LegacyNotifications(t *testing.T, c *Cluster) {
	updated := make(chan string, 4)
	conn := streamable.New(c.URL, nil)
	cl, err := client.Connect(testCtx(t), conn, &client.Options{ProtocolVersion: mcp.LatestLegacy, Listen: true,
		OnResourceUpdated: func(_ context.Context, uri string) { updated <- uri }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	if err := cl.Subscribe(testCtx(t), "test://r"); err != nil {
		t.Fatal(err)
	}
	get := -1
	deadline := time.Now().Add(10 * time.Second)
	for get < 0 && time.Now().Before(deadline) {
		for _, h := range c.Hits() {
			if h.Method == http.MethodGet {
				get = h.Node
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if get < 0 {
		t.Fatalf("the client opened no GET stream: %+v", c.Hits())
	}
	// Wait until the listener is connected, then change the resource on
	// an instance that does not hold it.
	select {
	case <-conn.Listening():
	case <-time.After(10 * time.Second):
		t.Fatal("the GET stream did not connect")
	}
	other := c.Nodes[(get+1)%len(c.Nodes)].Server
	other.ResourceUpdated("test://r")
	select {
	case uri := <-updated:
		if uri != "test://r" {
			t.Fatalf("updated %q", uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/updated on the GET stream")
	}
	select {
	case uri := <-updated:
		t.Fatalf("a second notification for %q: each instance must deliver only to the streams it holds", uri)
	case <-time.After(200 * time.Millisecond):
	}
}

// SessionMessage checks that a message of no request that one instance sends to a
// session (notifications/elicitation/complete after the call that started
// it) reaches the session's GET stream held by another instance, once.
func SessionMessage(t *testing.T, c *Cluster) {
	done := make(chan string, 4)
	conn := streamable.New(c.URL, nil)
	cl, err := client.Connect(testCtx(t), conn, &client.Options{ProtocolVersion: mcp.LatestLegacy, ElicitHandler: Greet, ElicitationURL: true,
		OnElicitationComplete: func(_ context.Context, id string) { done <- id }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	select {
	case <-conn.Listening():
	case <-time.After(10 * time.Second):
		t.Fatal("the GET stream did not connect")
	}
	if _, err := cl.CallTool(testCtx(t), &mcp.CallToolParams{Name: "later"}); err != nil {
		t.Fatal(err)
	}
	get, call := -1, -1
	for _, h := range c.Hits() {
		switch {
		case h.Method == http.MethodGet:
			get = h.Node
		case h.What == mcp.MethodToolsCall:
			call = h.Node
		}
	}
	if get == call {
		t.Fatalf("the GET stream and the call on the same instance %d: the scenario needs two", get)
	}
	select {
	case id := <-done:
		if id != "e1" {
			t.Fatalf("elicitation id %q", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("notifications/elicitation/complete did not reach the GET stream")
	}
	select {
	case id := <-done:
		t.Fatalf("a second notifications/elicitation/complete for %q", id)
	case <-time.After(200 * time.Millisecond):
	}
}

// KilledMidCall is the scenario where the instance running a call is
// killed; the client's resumption lands on another instance, which finds
// the owner gone and fails the call with a clear error (410) instead of letting it hang.
// The session goes on on the other instances.
func KilledMidCall(t *testing.T, c *Cluster) {
	logged := make(chan struct{}, 1)
	cl := Connect(t, c, &client.Options{ProtocolVersion: mcp.LatestLegacy, OnLog: func(context.Context, *mcp.LoggingMessageParams) {
		select {
		case logged <- struct{}{}:
		default:
		}
	}})
	errc := make(chan error, 1)
	go func() {
		_, err := cl.CallTool(testCtx(t), &mcp.CallToolParams{Name: "hold"})
		errc <- err
	}()
	select {
	case <-logged:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not start")
	}
	owner := -1
	for _, h := range c.Hits() {
		if h.What == mcp.MethodToolsCall {
			owner = h.Node
		}
	}
	c.Kill(owner)
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "stopped before it finished") {
			t.Fatalf("call error %v: want the clear error of a lost instance", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call hangs after its instance was killed")
	}
	if _, err := cl.ListTools(testCtx(t), nil); err != nil {
		t.Fatalf("the session did not survive on the other instances: %v", err)
	}
}
