package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// The chaos test (docs/design/multi-instance.md, "Chaos"): three
// instance processes, a durable Redis and the round-robin proxy; a
// workload of legacy sessions (elicitation through the shim, a logging
// count whose stream may have to be resumed), modern calls (MRTR
// elicitation) and tasks of both eras, while instances are SIGKILLed
// and restarted at random and Redis restarts once. It checks that
// every call ends with its result or a clear error (none hangs), that
// no call gets another's result or one twice, and that no completed
// task's result is lost: once the chaos stops, every task is terminal,
// and each that completed still has its result.
//
// MCPKIT_CHAOS_DURATION sets the length of the chaos (default
// chaosDefault, CI's short run); go test -v prints the counts.
// MCPKIT_CHAOS_LOGS, a directory, keeps the instances' logs there.

const (
	chaosDefault = 25 * time.Second
	chaosWorkers = 6
	chaosLease   = 3 * time.Second  // -task-lease of the instances
	callBound    = 60 * time.Second // a call longer than this hangs
)

// chaosInstance is one instance process, restarted on the same address.
type chaosInstance struct {
	addr string
	mu   sync.Mutex
	c    *child
}

// launch starts an instance process and waits until it serves.
func launch(env []string, addr, redisURL string) (*child, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "instance", "-listen", addr, "-redis", redisURL,
		"-task-lease", chaosLease.String())
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, addr: addr, out: make(chan string, 1000), done: make(chan struct{})}
	serving := make(chan struct{})
	go func() { // owned by c: ends when the process's stderr closes
		defer close(c.done)
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		var keep *os.File
		if dir := os.Getenv("MCPKIT_CHAOS_LOGS"); dir != "" {
			keep, _ = os.OpenFile(filepath.Join(dir, "instance-"+strings.ReplaceAll(addr, ":", "_")+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			defer keep.Close()
		}
		for sc.Scan() {
			if keep != nil {
				fmt.Fprintln(keep, sc.Text())
			}
			if strings.Contains(sc.Text(), "serving") {
				once.Do(func() { close(serving) })
			}
		}
	}()
	select {
	case <-serving:
		return c, nil
	case <-c.done:
		_ = cmd.Wait()
		return nil, fmt.Errorf("instance %s exited before serving", addr)
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		<-c.done
		return nil, fmt.Errorf("instance %s did not serve within 30 s", addr)
	}
}

func (in *chaosInstance) kill() {
	in.mu.Lock()
	c := in.c
	in.c = nil
	in.mu.Unlock()
	if c != nil {
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		_ = c.cmd.Wait()
		<-c.done
	}
}

// chaosStats counts outcomes; every method is safe for concurrent use.
type chaosStats struct {
	mu      sync.Mutex
	ok      map[string]int // by kind of call
	errs    map[string]int // clear errors, by kind and reason
	hangs   []string
	wrong   []string // a result that is not the call's own
	nonces  map[string]bool
	tasks   map[string]*chaosTask
	kills   int
	restart int
	// open are the workers' clients, closed once the tasks are verified:
	// a legacy task answers only to its session, which Close ends.
	open []*client.Client
}

type chaosTask struct {
	id, nonce, era string
	session        string // the legacy session that started it
	result         string // the text TaskResult returned ("" if none)
}

// keep holds a client open until the test ends.
func (s *chaosStats) keep(cl *client.Client) {
	s.mu.Lock()
	s.open = append(s.open, cl)
	s.mu.Unlock()
}

func (s *chaosStats) add(kind string, err error, ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil:
		s.ok[kind]++
	case ctx.Err() != nil:
		s.hangs = append(s.hangs, kind+": "+err.Error())
	default:
		s.errs[kind+": "+reason(err)]++
	}
}

// reason shortens an error to its kind, for the counts.
func reason(err error) string {
	msg := err.Error()
	for _, r := range []string{"stopped before it finished", "session store is unreachable", "503", "502", "404",
		"unknown task", "cancelled", "shutting down", "connection refused", "EOF", "did not take the answers"} {
		if strings.Contains(msg, r) {
			return r
		}
	}
	if len(msg) > 80 {
		msg = msg[:80]
	}
	return msg
}

// result records a call's text, checking it is the call's own.
func (s *chaosStats) result(kind, text, want string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !strings.Contains(text, want) {
		s.wrong = append(s.wrong, fmt.Sprintf("%s: got %q, want %q", kind, text, want))
		return
	}
	if strings.HasPrefix(want, "work ") {
		if s.nonces[want] {
			s.wrong = append(s.wrong, fmt.Sprintf("%s: %q delivered twice", kind, want))
		}
		s.nonces[want] = true
	}
}

func TestChaos(t *testing.T) {
	redistest.Need(t)
	d := chaosDefault
	if v := os.Getenv("MCPKIT_CHAOS_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("MCPKIT_CHAOS_DURATION: %v", err)
		}
	}
	rs, err := redistest.StartDurable(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Stop()
	env := []string{"MCPKIT_STATE_KEY=" + stateKey()}
	instances := make([]*chaosInstance, 3)
	var addrs []string
	for i := range instances {
		in := &chaosInstance{addr: freeAddr(t)}
		if in.c, err = launch(env, in.addr, rs.URL); err != nil {
			t.Fatal(err)
		}
		instances[i] = in
		addrs = append(addrs, in.addr)
	}
	defer func() {
		for _, in := range instances {
			in.kill()
		}
	}()
	front := httptest.NewServer(newRoundRobin(addrs))
	defer front.Close()

	stats := &chaosStats{ok: map[string]int{}, errs: map[string]int{}, nonces: map[string]bool{}, tasks: map[string]*chaosTask{}}
	ctx, stop := context.WithTimeout(context.Background(), d)
	defer stop()
	var wg sync.WaitGroup
	for w := range chaosWorkers {
		wg.Go(func() { chaosWorker(ctx, front.URL, w, stats) })
	}
	// The chaos: an instance killed (SIGKILL) and restarted every 2-4 s;
	// Redis restarted once, half way.
	var chaosErr error
	wg.Go(func() {
		redisAt := time.Now().Add(d / 2)
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(2*time.Second + rand.N(2*time.Second)):
			}
			if !redisAt.IsZero() && time.Now().After(redisAt) {
				redisAt = time.Time{}
				if err := rs.Restart(); err != nil {
					chaosErr = err
					return
				}
				stats.mu.Lock()
				stats.restart++
				stats.mu.Unlock()
				continue
			}
			in := instances[rand.N(len(instances))]
			in.kill()
			stats.mu.Lock()
			stats.kills++
			stats.mu.Unlock()
			time.Sleep(300 * time.Millisecond)
			c, err := launch(env, in.addr, rs.URL)
			if err != nil {
				chaosErr = err
				return
			}
			in.mu.Lock()
			in.c = c
			in.mu.Unlock()
		}
	})
	wg.Wait()
	if chaosErr != nil {
		t.Fatalf("the chaos itself failed: %v", chaosErr)
	}

	// Every instance is up. Past one lease, a task whose owner was killed
	// is failed; the others ran to their end (at most a few seconds).
	time.Sleep(chaosLease + time.Second)
	verifyTasks(t, front.URL, stats)
	for _, cl := range stats.open {
		_ = cl.Close()
	}

	stats.mu.Lock()
	defer stats.mu.Unlock()
	t.Logf("chaos for %v: %d instance kills, %d Redis restarts", d, stats.kills, stats.restart)
	var kinds []string
	for k := range stats.ok {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	total := 0
	for _, k := range kinds {
		t.Logf("  %-14s %5d results", k, stats.ok[k])
		total += stats.ok[k]
	}
	var errKinds []string
	for k := range stats.errs {
		errKinds = append(errKinds, k)
	}
	sort.Strings(errKinds)
	nerr := 0
	for _, k := range errKinds {
		t.Logf("  clear error    %5d  %s", stats.errs[k], k)
		nerr += stats.errs[k]
	}
	t.Logf("  total: %d results, %d clear errors, %d hangs, %d wrong or duplicate results", total, nerr, len(stats.hangs), len(stats.wrong))
	if len(stats.hangs) > 0 {
		t.Errorf("calls that hung (past %v): %v", callBound, stats.hangs)
	}
	if len(stats.wrong) > 0 {
		t.Errorf("wrong or duplicate results: %v", stats.wrong)
	}
	if total == 0 {
		t.Error("no call succeeded")
	}
}

// chaosWorker runs calls until ctx ends, each with its own bound.
func chaosWorker(ctx context.Context, url string, w int, stats *chaosStats) {
	clients := map[string]*client.Client{}
	conns := map[string]*streamable.Conn{}
	defer func() {
		for _, cl := range clients {
			stats.keep(cl)
		}
	}()
	get := func(version string) (*client.Client, error) {
		if cl := clients[version]; cl != nil {
			return cl, nil
		}
		cctx, cancel := context.WithTimeout(context.Background(), callBound)
		defer cancel()
		conn := streamable.New(url, nil)
		cl, err := client.Connect(cctx, conn, &client.Options{
			ProtocolVersion: version, Tasks: true,
			ElicitHandler: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
			},
		})
		if err != nil {
			return nil, err
		}
		clients[version], conns[version] = cl, conn
		return cl, nil
	}
	for n := 0; ctx.Err() == nil; n++ {
		version := mcp.LatestLegacy
		if rand.N(2) == 1 {
			version = mcp.Version20260728
		}
		era := "legacy"
		if version == mcp.Version20260728 {
			era = "modern"
		}
		cctx, cancel := context.WithTimeout(context.Background(), callBound)
		cl, err := get(version)
		if err != nil {
			stats.add(era+" connect", err, cctx)
			cancel()
			continue
		}
		var kind string
		switch op := rand.N(4); {
		case op == 0:
			kind = era + " ask"
			var res *mcp.CallToolResult
			if res, err = cl.CallTool(cctx, &mcp.CallToolParams{Name: "ask"}); err == nil {
				stats.result(kind, text(res), "hello Ada, from ")
			}
		case op == 1 && era == "legacy":
			kind = "legacy count"
			var res *mcp.CallToolResult
			if res, err = cl.CallTool(cctx, &mcp.CallToolParams{Name: "count", Arguments: []byte(`{"n":2}`)}); err == nil {
				stats.result(kind, text(res), "counted to 2 on ")
			}
		case op == 1:
			kind = "modern work"
			nonce := fmt.Sprintf("w%d-%d", w, n)
			var res *mcp.CallToolResult
			if res, err = cl.CallTool(cctx, &mcp.CallToolParams{Name: "work", Arguments: fmt.Appendf(nil, `{"nonce":%q,"ms":100}`, nonce)}); err == nil {
				stats.result(kind, text(res), "work "+nonce+" ")
			}
		default:
			kind = era + " task"
			err = chaosTaskCall(cctx, cl, conns[version].SessionID(), era, fmt.Sprintf("t%d-%d", w, n), stats)
		}
		stats.add(kind, err, cctx)
		if err != nil && cctx.Err() == nil {
			// The client may be broken (its session lost with an
			// instance): the next call connects again. The session stays
			// (not closed) for the tasks it started.
			stats.keep(cl)
			delete(clients, version)
			delete(conns, version)
		}
		cancel()
	}
}

// chaosTaskCall starts a task and waits for its result, asking again
// (as a client would) when the wait fails for another reason than the
// task's own outcome.
func chaosTaskCall(ctx context.Context, cl *client.Client, session, era, nonce string, stats *chaosStats) error {
	task, err := cl.StartToolTask(ctx, &mcp.CallToolParams{Name: "work", Arguments: fmt.Appendf(nil, `{"nonce":%q,"ms":%d}`, nonce, 200+rand.N(1500))})
	if err != nil {
		return err
	}
	want := "work " + nonce + " "
	if task.ID == "" { // answered at once
		var res mcp.CallToolResult
		if err := json.Unmarshal(task.Result, &res); err != nil {
			return err
		}
		stats.result(era+" task", text(&res), want)
		return nil
	}
	ct := &chaosTask{id: task.ID, nonce: nonce, era: era, session: session}
	stats.mu.Lock()
	stats.tasks[task.ID] = ct
	stats.mu.Unlock()
	for attempt := 0; ; attempt++ {
		res, err := cl.TaskResult(ctx, task.ID)
		if err == nil {
			stats.mu.Lock()
			ct.result = text(res)
			stats.mu.Unlock()
			stats.result(era+" task", text(res), want)
			return nil
		}
		if attempt == 4 || ctx.Err() != nil || strings.Contains(err.Error(), "stopped before it finished") && isTaskOutcome(err) {
			return err
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

// isTaskOutcome reports whether err is the task's own end (failed,
// cancelled), not a failure to learn it.
func isTaskOutcome(err error) bool {
	return errors.Is(err, client.ErrTaskFailed) || errors.Is(err, client.ErrTaskCanceled) || strings.Contains(err.Error(), "no heartbeat since")
}

// verifyTasks checks every task started: terminal now, and still holding
// its result when the client got one. A 2026 task (no session, no
// principal) is asked by a new client; a legacy one on the session that
// started it, the only one it answers to (the client of that session may
// be broken: the requests are made here, with its session id).
func verifyTasks(t *testing.T, url string, stats *chaosStats) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	modern, err := client.Connect(ctx, streamable.New(url, nil), &client.Options{ProtocolVersion: mcp.Version20260728, Tasks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer modern.Close()
	getTask := func(ct *chaosTask) (mcp.TaskStatus, error) {
		if ct.era == "modern" {
			got, err := modern.GetTask(ctx, ct.id)
			if err != nil {
				return "", err
			}
			return got.Status, nil
		}
		var got mcp.Task
		err := sessionCall(ctx, url, ct.session, mcp.MethodTasksGet, ct.id, &got)
		return got.Status, err
	}
	taskResult := func(ct *chaosTask) (*mcp.CallToolResult, error) {
		if ct.era == "modern" {
			return modern.TaskResult(ctx, ct.id)
		}
		var res mcp.CallToolResult
		if err := sessionCall(ctx, url, ct.session, mcp.MethodTasksResult, ct.id, &res); err != nil {
			return nil, err
		}
		return &res, nil
	}
	stats.mu.Lock()
	tasks := make([]*chaosTask, 0, len(stats.tasks))
	for _, ct := range stats.tasks {
		tasks = append(tasks, ct)
	}
	stats.mu.Unlock()
	byStatus := map[mcp.TaskStatus]int{}
	lost, stuck, recovered := 0, 0, 0
	for _, ct := range tasks {
		status, err := getTask(ct)
		if err != nil {
			t.Errorf("task %s (%s): %v", ct.id, ct.era, err)
			continue
		}
		byStatus[status]++
		if !status.Terminal() {
			stuck++
			t.Errorf("task %s (%s) is still %s after the chaos", ct.id, ct.era, status)
			continue
		}
		var res string
		if status == mcp.TaskCompleted {
			r, err := taskResult(ct)
			if err != nil {
				t.Errorf("task %s completed, its result: %v", ct.id, err)
				continue
			}
			res = text(r)
			if !strings.Contains(res, "work "+ct.nonce+" ") {
				t.Errorf("task %s: result %q is not its own (%s)", ct.id, res, ct.nonce)
			}
		}
		if ct.result != "" && res != ct.result {
			lost++
			t.Errorf("task %s: the client got %q, the store now has %s %q", ct.id, ct.result, status, res)
		}
		if ct.result == "" && res != "" {
			recovered++ // the client gave up waiting; the result was kept
		}
	}
	statuses := slices.Sorted(func(yield func(string) bool) {
		for s, n := range byStatus {
			if !yield(fmt.Sprintf("%s %d", s, n)) {
				return
			}
		}
	})
	t.Logf("tasks: %d started; now %s; %d results kept that the client had stopped waiting for; %d lost; %d not terminal",
		len(tasks), strings.Join(statuses, ", "), recovered, lost, stuck)
}

// sessionCall makes a 2025-11-25 task request (tasks/get, tasks/result)
// on the legacy session sid and decodes its result into out.
func sessionCall(ctx context.Context, url, sid, method, taskID string, out any) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": map[string]any{"taskId": taskID}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", mcp.LatestLegacy)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %s", method, resp.Status)
	}
	var answer struct {
		ID     jsontext.Value `json:"id"`
		Result jsontext.Value `json:"result"`
		Error  *jsonrpc.Error `json:"error"`
	}
	found := false
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for !found && sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			found = ok && json.Unmarshal([]byte(strings.TrimSpace(data)), &answer) == nil && string(answer.ID) == "1"
		}
	} else {
		found = json.UnmarshalRead(resp.Body, &answer) == nil
	}
	switch {
	case !found:
		return fmt.Errorf("%s: no answer", method)
	case answer.Error != nil:
		return answer.Error
	}
	return json.Unmarshal(answer.Result, out)
}

func text(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}
