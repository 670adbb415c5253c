package streamable

import (
	"context"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestResponderKeepsOrder: a JSON answer goes straight to the responder
// only when no message queued before it is still to be dealt with; one
// that arrives behind a queued message (a notification from another
// stream) is queued after it, and the reader gets both in order. Once
// the reader is back in Read, answers go straight again.
func TestResponderKeepsOrder(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		writeJSON(w, http.StatusOK, result(in.Msg.ID, `{"resultType":"complete"}`))
	})
	c := newConn(t, f, nil)
	var direct atomic.Int32
	c.SetResponder(func([]byte) bool { direct.Add(1); return true })
	modern := func(id int64) transport.Message {
		return transport.Message{Data: []byte(request(mcp.IntID(id), mcp.MethodToolsList, modernParams("2026-07-28", ""))),
			Modern: transport.Modern{Version: "2026-07-28", ID: mcp.IntID(id), Method: mcp.MethodToolsList}}
	}
	ctx := testCtx(t)

	if err := c.Write(ctx, modern(1)); err != nil {
		t.Fatal(err)
	}
	if direct.Load() != 1 {
		t.Fatalf("the first answer, with nothing queued: %d delivered directly, want 1", direct.Load())
	}

	// A message from another stream, queued and not yet read.
	if err := c.enqueue(ctx, []byte(notification("notifications/tools/list_changed"))); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, modern(2)); err != nil {
		t.Fatal(err)
	}
	if direct.Load() != 1 {
		t.Fatal("an answer overtook a queued notification")
	}
	if m := readMsg(t, c); m.Method != "notifications/tools/list_changed" {
		t.Fatalf("read %+v first, want the notification", m)
	}
	if m := readMsg(t, c); m.ID != mcp.IntID(2) {
		t.Fatalf("read %+v second, want the answer to 2", m)
	}

	// The reader back in Read: the answer it was given is dealt with.
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(rctx)
		done <- err
	}()
	// Read counts the last message off before it waits; the write is
	// made until it sees that (an event, not a delay: each Write is a
	// POST answered at once).
	for c.unread.Load() != 0 {
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
	if err := c.Write(ctx, modern(3)); err != nil {
		t.Fatal(err)
	}
	cancel()
	recv(t, done, "the reader's end")
	if direct.Load() != 2 {
		t.Fatalf("with the reader back in Read: %d delivered directly, want 2", direct.Load())
	}
}
