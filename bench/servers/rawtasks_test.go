package servers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/bench/servers"
	"github.com/mcpkit/mcpkit/bench/workload"
)

// TestRawCluster runs W3 and WT on one in-memory instance of the raw
// ceiling of the multi-instance workloads, and checks that a task is
// served to its own session only.
func TestRawCluster(t *testing.T) {
	h, closeFn, err := servers.RawCluster(nil, "t:")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer func() { ts.Close(); closeFn() }()
	addr := strings.TrimPrefix(ts.URL, "http://")
	for _, wn := range []string{"W3", "WT"} {
		t.Run(wn, func(t *testing.T) { callOn(t, addr, workload.All[wn]) })
	}

	c, err := workload.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	deadline := time.Now().Add(10 * time.Second)
	alice, err := c.OpenSession(workload.PathTasks, deadline)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := c.OpenSession(workload.PathTasks, deadline)
	if err != nil {
		t.Fatal(err)
	}
	do := func(sid string, body []byte) string {
		hs := append([][2]string{{"Mcp-Session-Id", sid}}, workload.LegacyHeaders...)
		st, out, err := c.Do(workload.BuildRequest(addr, workload.PathTasks, hs, body), deadline)
		if err != nil || st != http.StatusOK {
			t.Fatalf("status %d, %v: %s", st, err, out)
		}
		return string(out)
	}
	out := do(alice, workload.TaskCall)
	i := strings.Index(out, `"taskId":"`)
	if i < 0 {
		t.Fatalf("no task: %s", out)
	}
	id := out[i+len(`"taskId":"`):]
	id = id[:strings.IndexByte(id, '"')]
	for _, m := range []string{"tasks/get", "tasks/result"} {
		if out := do(bob, workload.TaskIDBody(m, id)); !strings.Contains(out, `"error"`) {
			t.Errorf("%s of another session's task answered: %s", m, out)
		}
	}
	if out := do(alice, workload.TaskIDBody("tasks/result", id)); !strings.Contains(out, workload.Text) {
		t.Errorf("tasks/result: %s", out)
	}
	hs := append([][2]string{{"Mcp-Session-Id", "nope"}}, workload.LegacyHeaders...)
	if st, _, err := c.Do(workload.BuildRequest(addr, workload.PathTasks, hs, workload.TaskIDBody("tasks/get", id)), deadline); err != nil || st != http.StatusNotFound {
		t.Errorf("unknown session: status %d, %v", st, err)
	}
}

// TestRawClusterRedis runs W3 and WT through the round-robin proxy over
// two raw instances sharing a redis-server, so that every session and
// task is served by both in turn.
func TestRawClusterRedis(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH: the raw instances on Redis are not run")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	// redis-server signals readiness only by answering: poll PING.
	ready := time.Now().Add(30 * time.Second)
	for {
		rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
		err := rdb.Ping(context.Background()).Err()
		rdb.Close()
		if err == nil {
			break
		}
		if time.Now().After(ready) {
			t.Fatalf("redis-server not ready: %v", err)
		}
		select {
		case <-exited:
			t.Fatal("redis-server exited")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, err := os.Stat(sock); err != nil {
		t.Fatal(err)
	}
	var urls []*url.URL
	for range 2 {
		rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
		h, closeFn, err := servers.RawCluster(rdb, "t:")
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(h)
		t.Cleanup(func() { ts.Close(); closeFn(); rdb.Close() })
		u, _ := url.Parse(ts.URL)
		urls = append(urls, u)
	}
	callRoundRobin(t, urls)
}
