package streamhttp

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/seam"
)

// TestPeerCall: the protocol server's calls to another instance (tasks
// across instances) go over the broker and come back with the answer; a
// call to an instance that is not there reports it gone at once, and one
// whose instance dies while it waits ends (the probe), instead of
// hanging.
func TestPeerCall(t *testing.T) {
	a, b, _, brokerB := clusterPair(t, nil)
	pa := peers{a.h.cluster}
	ctx := context.Background()

	// Echo: B's server answers (here: a stand-in that echoes).
	b.h.cluster.mu.Lock()
	b.h.cluster.peer = seam.PeerHandler{Serve: func(_ context.Context, msg []byte) []byte { return append([]byte("echo "), msg...) }}
	b.h.cluster.mu.Unlock()
	reply, ok, err := pa.Call(ctx, brokerB.ID(), []byte("hi"))
	if err != nil || !ok || string(reply) != "echo hi" {
		t.Fatalf("Call = %q, %v, %v; want the echo", reply, ok, err)
	}

	if _, ok, err := pa.Call(ctx, "nobody", []byte("hi")); ok || err != nil {
		t.Fatalf("Call to no instance = %v, %v; want gone", ok, err)
	}

	// B's server takes the call and never answers; then B goes.
	served := make(chan struct{})
	b.h.cluster.mu.Lock()
	b.h.cluster.peer = seam.PeerHandler{Serve: func(ctx context.Context, _ []byte) []byte {
		close(served)
		<-ctx.Done() // until B's handler closes
		return nil
	}}
	b.h.cluster.mu.Unlock()
	done := make(chan bool, 1)
	go func() {
		_, ok, _ := pa.Call(ctx, brokerB.ID(), []byte("wait"))
		done <- ok
	}()
	<-served
	brokerB.Close() // B is gone, as A sees it
	if ok := <-done; ok {
		t.Fatal("the call to a gone instance reported an answer")
	}
}

// TestPushSessionNoStream: a settled task's status note reaches every
// instance; one that holds no stream of the session builds nothing (the
// notification's params are made only where it goes) and allocates
// nothing.
func TestPushSessionNoStream(t *testing.T) {
	a, _, _, _ := clusterPair(t, nil)
	p := peers{a.h.cluster}
	params := &countParams{}
	sid := a.openSession(true) // held here, with no GET stream
	if a.session(sid) == nil {
		t.Fatal("the session is not held here")
	}
	for _, id := range []string{"no-such-session", sid} {
		if p.PushSession(id, "notifications/tasks/status", params) || params.made != 0 {
			t.Fatalf("%s: pushed with no stream here (params made %d times)", id, params.made)
		}
		if n := testing.AllocsPerRun(100, func() { p.PushSession(id, "notifications/tasks/status", params) }); n != 0 {
			t.Fatalf("%s: PushSession with no stream here: %v allocations, want 0", id, n)
		}
	}
}

// countParams counts how often its params are built.
type countParams struct{ made int }

func (c *countParams) NotifyParams() any { c.made++; return struct{}{} }
