package streamable

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestResumeSessionHeaders: after Resume, requests carry the session and
// revision; the first 404 fails with ErrResumedSessionGone (a 404
// *StatusError) and forgets the session, so that the next initialize
// goes without it; with KeepSession, Close sends no DELETE.
func TestResumeSessionHeaders(t *testing.T) {
	var gone atomic.Bool
	gone.Store(true)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusOK)
		case in.Msg.Method == mcp.MethodInitialize:
			answerInit(w, in, "new")
		case r.Header.Get("Mcp-Session-Id") == "old" && gone.Load():
			w.WriteHeader(http.StatusNotFound)
		default:
			writeJSON(w, http.StatusOK, result(in.Msg.ID, `{}`))
		}
	})
	c := newConn(t, f, &Options{KeepSession: true})
	if err := c.Resume("old", "2025-06-18", []byte(`{"protocolVersion":"2025-06-18"}`)); err != nil {
		t.Fatal(err)
	}
	err := c.Write(testCtx(t), transport.Message{Data: []byte(request(mcp.IntID(1), mcp.MethodPing, ""))})
	var se *StatusError
	if !errors.Is(err, ErrResumedSessionGone) || !errors.As(err, &se) || se.StatusCode != http.StatusNotFound {
		t.Fatalf("Write = %v, want ErrResumedSessionGone with a 404", err)
	}
	if in := f.next(t, http.MethodPost); in.Header.Get("Mcp-Session-Id") != "old" || in.Header.Get("Mcp-Protocol-Version") != "2025-06-18" {
		t.Errorf("the resumed request's headers: %v", in.Header)
	}
	if c.SessionID() != "" || c.ProtocolVersion() != "" {
		t.Errorf("after the 404: session %q, version %q", c.SessionID(), c.ProtocolVersion())
	}
	mustWrite(t, c, request(mcp.IntID(2), mcp.MethodInitialize, `{}`))
	readMsg(t, c)
	if in := f.next(t, http.MethodPost); in.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("initialize carried session %q", in.Header.Get("Mcp-Session-Id"))
	}
	if err := closeConn(t, c); err != nil {
		t.Fatal(err)
	}
	if n := f.count(http.MethodDelete); n != 0 {
		t.Errorf("KeepSession: %d DELETE sent", n)
	}

	// A session that the server still has goes on, and without
	// KeepSession, Close ends it.
	gone.Store(false)
	c2 := newConn(t, f, nil)
	if err := c2.Resume("old", "2025-06-18", nil); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, c2, request(mcp.IntID(3), mcp.MethodPing, ""))
	readMsg(t, c2)
	if err := closeConn(t, c2); err != nil {
		t.Fatal(err)
	}
	if del := f.of(http.MethodDelete); len(del) != 1 || del[0].Header.Get("Mcp-Session-Id") != "old" {
		t.Errorf("DELETEs = %v", del)
	}
}

// TestResumeBadInput: Resume refuses an id that is not visible ASCII, no
// version, params that are not JSON, and a Conn that already wrote.
func TestResumeBadInput(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		if in.Msg == nil {
			w.WriteHeader(http.StatusOK) // the DELETE of Close
			return
		}
		answerInit(w, in, "s")
	})
	c := newConn(t, f, nil)
	for _, tc := range []struct{ id, version, params string }{
		{"a b", "2025-06-18", ""},
		{"a\nb", "2025-06-18", ""},
		{"é", "2025-06-18", ""},
		{"ok", "", ""},
		{"ok", "2025-06-18", "{"},
	} {
		var params []byte
		if tc.params != "" {
			params = []byte(tc.params)
		}
		if err := c.Resume(tc.id, tc.version, params); err == nil {
			t.Errorf("Resume(%q, %q, %q) succeeded", tc.id, tc.version, tc.params)
		}
	}
	mustWrite(t, c, request(mcp.IntID(1), mcp.MethodInitialize, `{}`))
	readMsg(t, c)
	if err := c.Resume("late", "2025-06-18", nil); err == nil {
		t.Error("Resume after the first Write succeeded")
	}
	if c.SessionID() != "s" {
		t.Errorf("session = %q", c.SessionID())
	}
}
