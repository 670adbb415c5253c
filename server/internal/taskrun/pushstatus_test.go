package taskrun

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
	"github.com/mcpkit/mcpkit/store"
)

// elsewherePeers holds no session's stream: every PushSession finds
// none, as on every instance but the one that holds the stream.
type elsewherePeers struct{}

func (*elsewherePeers) ID() string { return "here" }
func (*elsewherePeers) Call(context.Context, string, []byte) ([]byte, bool, error) {
	return nil, false, nil
}
func (*elsewherePeers) Broadcast(context.Context, []byte) error            { return nil }
func (*elsewherePeers) PushSession(string, string, seam.NotifyParams) bool { return false }

// TestPushStatusElsewhereNoAllocs: a settled legacy task's status, taken
// from the peers' broadcast on an instance that does not hold the
// session's stream (every instance but one), costs no allocation.
func TestPushStatusElsewhereNoAllocs(t *testing.T) {
	m, _ := newManager(t, Config{})
	_, detach := m.AttachPeers(&elsewherePeers{})
	defer detach()
	rec := &store.TaskRecord{ID: "t", SessionID: "s", Status: mcp.TaskCompleted, CreatedAt: time.Now(), TTL: time.Minute}
	if n := testing.AllocsPerRun(100, func() { m.pushStatus(rec) }); n != 0 {
		t.Fatalf("pushStatus where the stream is not: %v allocations, want 0", n)
	}
}

// notePeers records what a Manager broadcasts and which sessions it
// pushes a status to, as if it held every session's stream.
type notePeers struct {
	mu     sync.Mutex
	casts  []string
	pushed []string
}

func (*notePeers) ID() string { return "here" }
func (*notePeers) Call(context.Context, string, []byte) ([]byte, bool, error) {
	return nil, false, nil
}
func (p *notePeers) Broadcast(_ context.Context, msg []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.casts = append(p.casts, string(msg))
	return nil
}
func (p *notePeers) PushSession(sid, method string, params seam.NotifyParams) bool {
	t, _ := params.NotifyParams().(*mcp.Task)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pushed = append(p.pushed, sid+" "+method+" "+string(t.Status))
	return true
}

// TestRunlessEndsNoteTheSession: a legacy task that ends with no run on
// this instance (a cancel whose owner is out of reach, an owner whose
// lease ran out) tells its session: the peers' broadcast carries the
// note, and this instance pushes the status too.
func TestRunlessEndsNoteTheSession(t *testing.T) {
	for _, tc := range []struct {
		name   string
		end    func(m *Manager, rec *store.TaskRecord)
		status mcp.TaskStatus
	}{
		{"cancel", func(m *Manager, rec *store.TaskRecord) {
			m.Settle(nil, rec, mcp.TaskCancelled, CancelledByClient, nil, nil)
		}, mcp.TaskCancelled},
		{"lapsed owner", func(m *Manager, rec *store.TaskRecord) {
			m.ReapLapsed(context.Background(), rec)
		}, mcp.TaskFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newManager(t, Config{SettledRecords: 16, SettledBytes: 1 << 20})
			p := &notePeers{}
			_, detach := m.AttachPeers(p)
			defer detach()
			now := time.Now()
			rec := &store.TaskRecord{ID: "t", SessionID: "s", Owner: "gone", Status: mcp.TaskWorking,
				CreatedAt: now.Add(-time.Hour), TTL: 2 * time.Hour, LeaseUntil: now.Add(-time.Minute)}
			if err := m.cfg.Store.Put(context.Background(), rec.Clone()); err != nil {
				t.Fatal(err)
			}
			tc.end(m, rec.Clone())
			p.mu.Lock()
			defer p.mu.Unlock()
			if len(p.casts) != 1 || !strings.Contains(p.casts[0], `"note":true`) {
				t.Fatalf("broadcasts %q, want one with the note", p.casts)
			}
			if want := "s " + mcp.NotificationTasksStatus + " " + string(tc.status); len(p.pushed) != 1 || p.pushed[0] != want {
				t.Fatalf("pushed %q, want [%q]", p.pushed, want)
			}
		})
	}
}
