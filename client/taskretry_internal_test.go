package client

// Tests of TaskResult's retries over a real Streamable HTTP connection:
// a legacy server (or the proxy before it) failing tasks/result for a
// while is not the task failing.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

const retryTask = `{"taskId":"R1","status":"working","createdAt":"2025-11-30T08:00:00Z","lastUpdatedAt":"2025-11-30T08:00:00Z","ttl":30000}`

// flakyTasks is a 2025-11-25 server on a loopback listener that runs
// tools/call as a task and answers each tasks/result with the next of
// its script: "503", "502" or "403" (an HTTP error without a JSON-RPC
// body, as a proxy sends), "unavailable" (a 503 with the JSON-RPC error
// jsonrpc.ErrUnavailable for the request, as an mcpkit server whose store
// is down sends), "unavailable-inline" (that error, status 200),
// "stream-end" (an event stream that ends with no answer and no event id
// to resume from), "cut" (the connection closed without an
// answer), "error" (a JSON-RPC error response: the task failed), "ok"
// (the task's result). The last entry repeats. As a 2026-07-28 server
// (server/discover) it answers tasks/get the same way, "ok" being a
// completed task and "failed" a failed one.
type flakyTasks struct {
	*httptest.Server
	mu      sync.Mutex
	script  []string
	results int // tasks/result requests received
	cancels int // tasks/cancel requests received
}

func newFlakyTasks(t *testing.T, script ...string) *flakyTasks {
	f := &flakyTasks{script: script}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *flakyTasks) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     jsontext.Value `json:"id"`
		Method string         `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	reply := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,`+result+`}`)
	}
	switch m.Method {
	case mcp.MethodInitialize:
		w.Header().Set("Mcp-Session-Id", "s1")
		reply(`"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"flaky","version":"1"}}`)
	case mcp.MethodToolsCall:
		reply(`"result":{"task":` + retryTask + `}`)
	case mcp.MethodTasksCancel:
		f.mu.Lock()
		f.cancels++
		f.mu.Unlock()
		reply(`"result":` + strings.Replace(retryTask, "working", "cancelled", 1))
	case mcp.MethodServerDiscover: // a 2026-07-28 server
		reply(`"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},"serverInfo":{"name":"flaky","version":"1"},"ttlMs":0,"cacheScope":"private"}`)
	case mcp.MethodTasksGet:
		f.mu.Lock()
		step := f.script[min(f.results, len(f.script)-1)]
		f.results++
		f.mu.Unlock()
		modern := `"resultType":"complete","taskId":"R1","createdAt":"2026-11-30T08:00:00Z","lastUpdatedAt":"2026-11-30T08:00:01Z","ttlMs":60000,`
		switch step {
		case "ok":
			reply(`"result":{` + modern + `"status":"completed","result":{"content":[{"type":"text","text":"done"}]}}`)
		case "failed":
			reply(`"result":{` + modern + `"status":"failed","error":{"code":-32603,"message":"tool crashed"}}`)
		default:
			f.fail(w, m.ID, step)
		}
	case mcp.MethodTasksResult:
		f.mu.Lock()
		step := f.script[min(f.results, len(f.script)-1)]
		f.results++
		f.mu.Unlock()
		if step == "ok" {
			reply(`"result":{"content":[{"type":"text","text":"done"}]}`)
			return
		}
		f.fail(w, m.ID, step)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// fail answers a request with the failure step of the script (or with
// the JSON-RPC error of a failed task, "error").
func (f *flakyTasks) fail(w http.ResponseWriter, id jsontext.Value, step string) {
	reply := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,`+result+`}`)
	}
	switch step {
	case "503":
		http.Error(w, "upstream restarting", http.StatusServiceUnavailable)
	case "502":
		http.Error(w, "bad gateway", http.StatusBadGateway)
	case "403":
		http.Error(w, "forbidden", http.StatusForbidden)
	case "cut":
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	case "unavailable": // what an mcpkit server answers when its task store is down
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32603,"message":"Service Unavailable: try again later"}}`)
	case "unavailable-inline": // the same on a stream already begun
		reply(`"error":{"code":-32603,"message":"Service Unavailable: try again later"}`)
	case "stream-end": // an event stream that ends before the answer, with no event id (the instance went away)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(w).Flush()
	case "error":
		reply(`"error":{"code":-32603,"message":"tool crashed"}`)
	default:
		http.Error(w, "the test's script has no step "+step, http.StatusTeapot)
	}
}

// retryClock records the waits of the retries and, from the wait numbered
// endAt on (1-based; 0: never), ends the caller's context instead.
type retryClock struct {
	mu     sync.Mutex
	waits  []time.Duration
	endAt  int
	cancel context.CancelFunc
}

func (rc *retryClock) wait(ctx context.Context, d time.Duration) error {
	rc.mu.Lock()
	rc.waits = append(rc.waits, d)
	end := rc.endAt > 0 && len(rc.waits) >= rc.endAt
	rc.mu.Unlock()
	if end {
		rc.cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	return ctx.Err()
}

// counts returns how many tasks/result and tasks/cancel arrived.
func (f *flakyTasks) counts() (results, cancels int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.results, f.cancels
}

func (rc *retryClock) got() []time.Duration {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.waits)
}

// runFlaky runs a tool as a task against f and returns its outcome and
// every status the caller was told of.
func runFlaky(t *testing.T, f *flakyTasks, rc *retryClock, opts Options) (*mcp.CallToolResult, []mcp.TaskStatus, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	rc.cancel = cancel
	if opts.ProtocolVersion == "" {
		opts.ProtocolVersion = mcp.LatestLegacy
	}
	opts.wait = rc.wait
	c, err := Connect(ctx, streamable.New(f.URL, nil), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var mu sync.Mutex
	var seen []mcp.TaskStatus
	sctx := WithTaskStatus(ctx, func(tk *Task) {
		mu.Lock()
		seen = append(seen, tk.Status)
		mu.Unlock()
	})
	var res *mcp.CallToolResult
	if c.Era() == EraModern {
		res, err = c.TaskResult(sctx, "R1")
	} else {
		res, err = c.RunToolTask(sctx, &mcp.CallToolParams{Name: "job"})
	}
	mu.Lock()
	defer mu.Unlock()
	return res, slices.Clone(seen), err
}

// TestTaskResultRetriesTransient: tasks/result answered 503, 502, a cut
// connection (an instance restarting behind a proxy), the server's "try
// again later" (its task store down) and an event stream that ends
// without the answer is sent again
// with a doubling backoff; the task's real outcome follows, and the
// caller is never told the task failed.
func TestTaskResultRetriesTransient(t *testing.T) {
	f := newFlakyTasks(t, "503", "502", "cut", "unavailable", "unavailable-inline", "stream-end", "ok")
	rc := &retryClock{}
	res, seen, err := runFlaky(t, f, rc, Options{})
	if err != nil {
		t.Fatalf("RunToolTask = %v, want the task's result", err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "done" {
		t.Fatalf("result = %+v", res)
	}
	if slices.Contains(seen, mcp.TaskFailed) || seen[len(seen)-1] != mcp.TaskCompleted {
		t.Errorf("statuses = %v, want no failed and completed last", seen)
	}
	want := []time.Duration{DefaultTaskRetryBackoff, 2 * DefaultTaskRetryBackoff, 4 * DefaultTaskRetryBackoff, 8 * DefaultTaskRetryBackoff, 16 * DefaultTaskRetryBackoff, DefaultTaskRetryMaxBackoff}
	if got := rc.got(); !slices.Equal(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
	if n, _ := f.counts(); n != 7 {
		t.Errorf("%d tasks/result, want 7", n)
	}
}

// TestTaskResultBackoffCap: the wait doubles from TaskRetryBackoff up to
// TaskRetryMaxBackoff.
func TestTaskResultBackoffCap(t *testing.T) {
	f := newFlakyTasks(t, "503", "503", "503", "503", "ok")
	rc := &retryClock{}
	if _, _, err := runFlaky(t, f, rc, Options{TaskRetryBackoff: time.Second, TaskRetryMaxBackoff: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}
	if got := rc.got(); !slices.Equal(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
}

// TestTaskResultTransientUntilCtxEnds: a server that keeps failing is
// retried until the caller's context ends; the error returned then is
// the context's, with the last failure, and is not the task's failure.
func TestTaskResultTransientUntilCtxEnds(t *testing.T) {
	f := newFlakyTasks(t, "503")
	rc := &retryClock{endAt: 3}
	_, seen, err := runFlaky(t, f, rc, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("RunToolTask = %v, want context.Canceled", err)
	}
	var hs httpStatus
	if !errors.As(err, &hs) || hs.HTTPStatus() != http.StatusServiceUnavailable {
		t.Errorf("RunToolTask = %v, want the last failure (503) wrapped", err)
	}
	if slices.Contains(seen, mcp.TaskFailed) {
		t.Errorf("statuses = %v: a transport failure reported as the task's", seen)
	}
	results, cancels := f.counts()
	if n := len(rc.got()); n != 3 || results != 3 {
		t.Errorf("%d waits and %d tasks/result, want 3 and 3", n, results)
	}
	if cancels != 1 {
		t.Errorf("%d tasks/cancel, want 1 for the abandoned task", cancels)
	}
}

// TestTaskResultPermanentHTTPError: a 4xx is not retried and not the
// task's failure: it is returned as is.
func TestTaskResultPermanentHTTPError(t *testing.T) {
	f := newFlakyTasks(t, "403")
	rc := &retryClock{}
	_, seen, err := runFlaky(t, f, rc, Options{})
	var hs httpStatus
	if !errors.As(err, &hs) || hs.HTTPStatus() != http.StatusForbidden {
		t.Fatalf("RunToolTask = %v, want the 403", err)
	}
	if slices.Contains(seen, mcp.TaskFailed) {
		t.Errorf("statuses = %v: an HTTP 403 reported as the task's failure", seen)
	}
	if n := len(rc.got()); n != 0 {
		t.Errorf("%d retries of a 403", n)
	}
}

// TestTaskResultRPCErrorFails: a JSON-RPC error response to tasks/result
// is the task's outcome: failed, at once.
func TestTaskResultRPCErrorFails(t *testing.T) {
	f := newFlakyTasks(t, "error")
	rc := &retryClock{}
	_, seen, err := runFlaky(t, f, rc, Options{})
	if e, ok := jsonrpc.AsError(err); !ok || e.Code != mcp.CodeInternalError || e.Message != "tool crashed" {
		t.Fatalf("RunToolTask = %v, want the task's JSON-RPC error", err)
	}
	if len(seen) == 0 || seen[len(seen)-1] != mcp.TaskFailed {
		t.Errorf("statuses = %v, want failed last", seen)
	}
	if n := len(rc.got()); n != 0 {
		t.Errorf("%d retries of the task's outcome", n)
	}
}

// TestTaskModernRetriesTransient: a 2026-07-28 tasks/get poll that fails
// on the way (503, a cut connection, the server's "try again later", a
// stream that ends without the answer) is sent again; the task's real
// state follows.
func TestTaskModernRetriesTransient(t *testing.T) {
	f := newFlakyTasks(t, "503", "cut", "unavailable", "stream-end", "ok")
	rc := &retryClock{}
	res, seen, err := runFlaky(t, f, rc, Options{ProtocolVersion: mcp.Version20260728})
	if err != nil {
		t.Fatalf("TaskResult = %v, want the task's result", err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "done" {
		t.Fatalf("result = %+v", res)
	}
	if !slices.Equal(seen, []mcp.TaskStatus{mcp.TaskCompleted}) {
		t.Errorf("statuses = %v, want completed only", seen)
	}
	if n := len(rc.got()); n != 4 {
		t.Errorf("%d retries, want 4", n)
	}
}

// TestTaskModernFailedAfterRetry: after a transient failure, the task's
// own failed status is its outcome.
func TestTaskModernFailedAfterRetry(t *testing.T) {
	f := newFlakyTasks(t, "502", "failed")
	rc := &retryClock{}
	_, seen, err := runFlaky(t, f, rc, Options{ProtocolVersion: mcp.Version20260728})
	if e, ok := jsonrpc.AsError(err); !ok || e.Message != "tool crashed" {
		t.Fatalf("TaskResult = %v, want the task's error", err)
	}
	if !slices.Equal(seen, []mcp.TaskStatus{mcp.TaskFailed}) {
		t.Errorf("statuses = %v, want failed only", seen)
	}
}
