package taskrun

import (
	"context"
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
