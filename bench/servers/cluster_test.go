package servers_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/bench/servers"
	"github.com/mcpkit/mcpkit/bench/workload"
)

// callOn opens a session on addr if w needs one and runs w three times
// with the load generator's connection and checks.
func callOn(t *testing.T, addr string, w workload.Workload) {
	t.Helper()
	c, err := workload.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	deadline := time.Now().Add(10 * time.Second)
	sid := ""
	if w.Session {
		if sid, err = c.OpenSession(w.Path, deadline); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if w.Task {
			if polls, err := c.TaskCycle(w, sid, deadline); err != nil || polls < 1 {
				t.Fatalf("%d polls: %v", polls, err)
			}
			continue
		}
		st, body, err := c.Do(w.Request(addr, sid), deadline)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Check(st, body); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCluster runs W3 and WT on one in-memory instance of the
// multi-instance server.
func TestCluster(t *testing.T) {
	h, closeFn, err := servers.Cluster(servers.ClusterStores{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer func() { ts.Close(); closeFn() }()
	for _, wn := range []string{"W3", "WT"} {
		t.Run(wn, func(t *testing.T) { callOn(t, strings.TrimPrefix(ts.URL, "http://"), workload.All[wn]) })
	}
}

// TestClusterRoundRobin runs W3 and WT through the round-robin proxy over
// two instances that share the in-memory stores and bus, so that every
// session and task is served by both in turn (as cluster.sh does on
// Redis); an instance with stores of its own would not know the session.
func TestClusterRoundRobin(t *testing.T) {
	bus := store.NewMemoryBus()
	shared := servers.ClusterStores{
		Sessions: store.NewMemorySessionStore(),
		Events:   store.NewMemoryEventStore(nil),
		Tasks:    store.NewMemoryTaskStore(nil),
	}
	var urls []*url.URL
	for range 2 {
		st := shared
		br := bus.Broker()
		st.Broker = br
		h, closeFn, err := servers.Cluster(st)
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(h)
		t.Cleanup(func() { ts.Close(); closeFn(); _ = br.Close() })
		u, _ := url.Parse(ts.URL)
		urls = append(urls, u)
	}
	callRoundRobin(t, urls)
}

// callRoundRobin runs W3 and WT through the round-robin proxy over urls.
func callRoundRobin(t *testing.T, urls []*url.URL) {
	tr := &http.Transport{}
	front := httptest.NewServer(servers.RoundRobin(urls, tr))
	t.Cleanup(func() { front.Close(); tr.CloseIdleConnections() })
	for _, wn := range []string{"W3", "WT"} {
		t.Run(wn, func(t *testing.T) { callOn(t, strings.TrimPrefix(front.URL, "http://"), workload.All[wn]) })
	}
}

// TestTaskLifecycleRefuses: WT's cycle fails on a server whose tool does
// not run as a task, and on a wrong answer to tasks/result.
func TestTaskLifecycleRefuses(t *testing.T) {
	_, err := workload.TaskLifecycle(func([]byte) (int, []byte, error) {
		return 200, []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + workload.Text + `"}]}}`), nil
	})
	if err == nil {
		t.Error("a plain result accepted as a created task")
	}
	step := 0
	_, err = workload.TaskLifecycle(func([]byte) (int, []byte, error) {
		step++
		switch step {
		case 1:
			return 200, []byte(`{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t1","status":"working"}}}`), nil
		case 2:
			return 200, []byte(`{"jsonrpc":"2.0","id":2,"result":{"taskId":"t1","status":"completed"}}`), nil
		}
		return 200, []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}`), nil
	})
	if err == nil || !strings.Contains(err.Error(), "tasks/result") {
		t.Errorf("a failed tasks/result accepted: %v", err)
	}
}

// TestGateway runs W1, W2 and W3 through a gateway in front of mcpkit's
// session-less server, for both upstream eras.
func TestGateway(t *testing.T) {
	up, upClose, err := servers.New("mcpkit")
	if err != nil {
		t.Fatal(err)
	}
	uts := httptest.NewServer(up)
	defer func() { uts.Close(); upClose() }()
	for _, version := range []string{workload.Modern, workload.Legacy} {
		t.Run(version, func(t *testing.T) {
			h, closeFn, err := servers.Gateway(uts.URL+servers.PathStateless, version, nil)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			defer func() { ts.Close(); closeFn() }()
			for _, wn := range []string{"W1", "W2", "W3"} {
				t.Run(wn, func(t *testing.T) { callOn(t, strings.TrimPrefix(ts.URL, "http://"), workload.All[wn]) })
			}
		})
	}
}
