package taskrun

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

// fakeHost records what the Manager announces.
type fakeHost struct {
	mu        sync.Mutex
	announced []mcp.TaskStatus
}

func (h *fakeHost) Announce(_ *Run, rec *store.TaskRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.announced = append(h.announced, rec.Status)
}

func (*fakeHost) HasListener(string) bool           { return false }
func (*fakeHost) NotifyListeners(*store.TaskRecord) {}
func (*fakeHost) CastsStatus() bool                 { return true }
func (*fakeHost) CheckResponses(got mcp.InputResponses, _ map[string]string, _ map[string]jsontext.Value) (mcp.InputResponses, error) {
	return got, nil
}

func newManager(t *testing.T, cfg Config) (*Manager, *fakeHost) {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = store.NewMemoryTaskStore(nil)
	}
	if cfg.MaxTasks == 0 {
		cfg.MaxTasks = 10
	}
	if cfg.Lease == 0 {
		cfg.Lease = time.Minute
	}
	if cfg.NoteQueue == 0 {
		cfg.NoteQueue = 8
	}
	h := &fakeHost{}
	m := New(cfg, h)
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	return m, h
}

// TestSettleRace: a cancel and a completion racing on the store settle
// the task once; the loser changes nothing and announces nothing.
func TestSettleRace(t *testing.T) {
	for range 50 {
		m, h := newManager(t, Config{})
		rec := &store.TaskRecord{ID: "t", Status: mcp.TaskWorking, CreatedAt: time.Now(), TTL: time.Minute}
		if err := m.Store().Put(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Go(func() { m.Settle(nil, rec.Clone(), mcp.TaskCompleted, "", []byte(`{"content":[]}`), nil) })
		wg.Go(func() { m.Settle(nil, rec.Clone(), mcp.TaskCancelled, "", nil, nil) })
		wg.Wait()
		cur, _ := m.Store().Get(context.Background(), "t")
		switch cur.Status {
		case mcp.TaskCompleted:
			if cur.Result == nil {
				t.Fatal("completed without its result")
			}
		case mcp.TaskCancelled:
			if cur.Result != nil {
				t.Fatal("cancelled with a result")
			}
		default:
			t.Fatalf("status %s", cur.Status)
		}
		if len(h.announced) != 1 {
			t.Fatalf("announced %v, want one change", h.announced)
		}
	}
}

// blockJob runs until its context ends, saying when it started.
type blockJob struct{ started chan struct{} }

func (j blockJob) Step(ctx context.Context) Step {
	close(j.started)
	<-ctx.Done()
	return Step{Kind: StepDone, Result: jsontext.Value(`{"content":[]}`)}
}

func (blockJob) Gather(context.Context, *Run, *store.TaskRecord) bool { return false }

// TestShutdownFailsRunningTask: Shutdown cancels a running Job and the
// task is recorded failed with the shutdown message, not completed; no
// new task starts afterwards.
func TestShutdownFailsRunningTask(t *testing.T) {
	m, _ := newManager(t, Config{})
	rec := &store.TaskRecord{TTL: time.Minute}
	run, err := m.Begin(context.Background(), rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	job := blockJob{started: make(chan struct{})}
	m.Go(run, rec, job)
	<-job.started
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	cur, err := m.Store().Get(context.Background(), rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Status != mcp.TaskFailed || !strings.Contains(cur.StatusMessage, "shut down") {
		t.Fatalf("after Shutdown: %s %q", cur.Status, cur.StatusMessage)
	}
	if _, err := m.Begin(context.Background(), &store.TaskRecord{TTL: time.Minute}, nil); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Fatalf("Begin after Shutdown = %v", err)
	}
}

// TestBeginCap: past Config.MaxTasks a new task is refused.
func TestBeginCap(t *testing.T) {
	m, _ := newManager(t, Config{MaxTasks: 1})
	rec := &store.TaskRecord{TTL: time.Minute}
	run, err := m.Begin(context.Background(), rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Begin(context.Background(), &store.TaskRecord{TTL: time.Minute}, nil); err == nil || !strings.Contains(err.Error(), "too many tasks running (the server's limit is 1)") {
		t.Fatalf("second Begin = %v", err)
	}
	job := blockJob{started: make(chan struct{})}
	m.Go(run, rec, job)
	<-job.started
	m.Stop(rec.ID)
	<-run.done
	if cur, _ := m.Store().Get(context.Background(), rec.ID); cur.Status != mcp.TaskCancelled {
		t.Fatalf("stopped task: %s", cur.Status)
	}
}

// TestNoteQueueKeepsNewest: a legacy task's notifications wait for a
// carrier, at most Config.NoteQueue of them, the oldest dropped, and go
// in order once one comes; a carrier whose send fails leaves them queued.
func TestNoteQueueKeepsNewest(t *testing.T) {
	m, _ := newManager(t, Config{NoteQueue: 2})
	run := &Run{ID: "t", done: make(chan struct{})}
	for _, p := range []string{"1", "2", "3"} {
		m.Note(run, "notifications/progress", p)
	}
	// A lender that is gone: its send fails and its carrier ends (as a
	// borrowed carrier's does), so the note stays for the next one.
	var failed []string
	gone, cancel := context.WithCancel(context.Background())
	run.addCarrier(&Carrier{Ctx: gone, Notify: func(_ string, params any) error {
		failed = append(failed, params.(string))
		cancel()
		return context.Canceled
	}})
	run.flushNotes()
	var sent []string
	defer run.addCarrier(&Carrier{Ctx: context.Background(), Notify: func(_ string, params any) error {
		sent = append(sent, params.(string))
		return nil
	}})()
	run.flushNotes()
	if strings.Join(sent, ",") != "2,3" {
		t.Fatalf("sent %v (a failing carrier tried %v), want 2,3", sent, failed)
	}
}
