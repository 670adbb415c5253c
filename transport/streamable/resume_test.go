package streamable

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// TestResumeAfterCleanEnd is the conformance scenario sse-retry: the
// server primes the POST stream with an id and retry: 500 and ends it
// before the response; the client must resume with GET and Last-Event-ID
// 500 ms later (the scenario accepts 450–700 ms). The resumed stream ends
// again after one more event, and the client resumes from that event's id
// (the retry value persists), where the response waits. The waits are on
// a manual clock: the test checks the delay each asks for, and that no
// GET is sent before the test ends the wait.
func TestResumeAfterCleanEnd(t *testing.T) {
	ended := make(chan string, 4)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		switch {
		case r.Method == http.MethodPost:
			sseStart(w)
			sseEvent(w, "s1_0", 500*time.Millisecond, "")
			ended <- "s1_0"
		case in.Header.Get("Last-Event-ID") == "s1_0":
			sseStart(w)
			sseEvent(w, "s1_1", 0, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"half way"}}`)
			ended <- "s1_1"
		case in.Header.Get("Last-Event-ID") == "s1_1":
			sseStart(w)
			sseEvent(w, "s1_2", 0, result(mcp.IntID(7), `{"content":[]}`))
		default:
			t.Errorf("unexpected %s with Last-Event-ID %q", r.Method, in.Header.Get("Last-Event-ID"))
			w.WriteHeader(http.StatusBadRequest)
		}
	})
	clock := newWaitClock(false)
	c := newConn(t, f, nil)
	c.waitAfter = clock.After
	mustWrite(t, c, request(mcp.IntID(7), "tools/call", `{"name":"slow"}`))
	for i, want := range []string{"s1_0", "s1_1"} {
		w := clock.next(t)
		// The handler reported the end before returning, hence before the
		// client could see the stream end and start waiting.
		select {
		case got := <-ended:
			if got != want {
				t.Errorf("wait %d: the stream that ended last is %s, want %s", i, got, want)
			}
		default:
			t.Errorf("wait %d: the client waits to resume, but no stream has ended", i)
		}
		if w.d != 500*time.Millisecond {
			t.Errorf("wait %d: the client waits %v to resume, want 500ms (retry: 500)", i, w.d)
		}
		if n := f.count(http.MethodGet); n != i {
			t.Errorf("wait %d: %d GETs before the wait ended, want %d", i, n, i)
		}
		w.release()
	}
	if m := readMsg(t, c); m.Method != "notifications/message" {
		t.Fatalf("first message %v, want the notification of the resumed stream", m)
	}
	if m := readMsg(t, c); m.ID != mcp.IntID(7) || m.Error != nil {
		t.Fatalf("second message %v, want the response", m)
	}
	gets := f.of(http.MethodGet)
	if len(gets) != 2 {
		t.Fatalf("%d GETs, want 2", len(gets))
	}
	for i, want := range []string{"s1_0", "s1_1"} {
		g := gets[i]
		if got := g.Header.Get("Last-Event-ID"); got != want {
			t.Errorf("GET %d Last-Event-ID %q, want %q", i, got, want)
		}
		if a := g.Header.Get("Accept"); !strings.Contains(a, "text/event-stream") {
			t.Errorf("GET %d Accept %q", i, a)
		}
	}
	if d := clock.Delays(); len(d) != 2 {
		t.Errorf("the client waited %v, want two waits", d)
	}
}

// TestResumeAfterTCPCut: the connection of a POST stream is cut (not a
// clean end) after the priming event; the client resumes with GET.
func TestResumeAfterTCPCut(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		switch r.Method {
		case http.MethodPost:
			hijackCut(t, w, "id: cut_0\nretry: 100\ndata:\n\n"+
				"id: cut_1\ndata: "+notification("notifications/before-cut")+"\n\n"+
				"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/half")
		case http.MethodGet:
			sseStart(w)
			sseEvent(w, "cut_2", 0, result(mcp.StringID("q"), `{}`))
		}
	})
	c := newConn(t, f, nil)
	mustWrite(t, c, request(mcp.StringID("q"), "tools/call", `{}`))
	if m := readMsg(t, c); m.Method != "notifications/before-cut" {
		t.Fatalf("first message %v", m)
	}
	if m := readMsg(t, c); m.ID != mcp.StringID("q") {
		t.Fatalf("second message %v, want the response from the resumed stream", m)
	}
	gets := f.of(http.MethodGet)
	if len(gets) != 1 || gets[0].Header.Get("Last-Event-ID") != "cut_1" {
		t.Fatalf("GETs %v, want one with Last-Event-ID cut_1", gets)
	}
}

// TestResumeFailures: a stream that cannot be resumed fails its request
// with a JSON-RPC error instead of leaving the call hanging.
func TestResumeFailures(t *testing.T) {
	t.Run("no event id", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
			sseStart(w)
			sseEvent(w, "", 0, notification("notifications/x"))
		})
		c := newConn(t, f, nil)
		mustWrite(t, c, request(mcp.IntID(1), "tools/call", `{}`))
		readMsg(t, c)
		m := readMsg(t, c)
		if m.ID != mcp.IntID(1) || m.Error == nil || m.Error.Code != mcp.CodeInternalError || !strings.Contains(m.Error.Message, "no event id") {
			t.Errorf("Read %v %v", m, m.Error)
		}
		// The error is the connection's, and says so.
		if m.Error != nil && string(m.Error.Data) != transport.LostAnswerData {
			t.Errorf("error data %s, want transport.LostAnswerData", m.Error.Data)
		}
		if n := f.count(http.MethodGet); n != 0 {
			t.Errorf("%d GETs without an event id to resume from", n)
		}
	})
	t.Run("resume refused", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
			if r.Method == http.MethodGet {
				writeJSON(w, http.StatusNotFound, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Not Found"}}`)
				return
			}
			sseStart(w)
			sseEvent(w, "a_1", 100*time.Millisecond, "")
		})
		c := newConn(t, f, nil)
		mustWrite(t, c, request(mcp.IntID(1), "tools/call", `{}`))
		m := readMsg(t, c)
		if m.ID != mcp.IntID(1) || m.Error == nil || !strings.Contains(m.Error.Message, "404") {
			t.Errorf("Read %v %v", m, m.Error)
		}
		if n := f.count(http.MethodGet); n != 1 {
			t.Errorf("%d GETs, want 1: a 404 is not retried", n)
		}
	})
	t.Run("resumes bounded", func(t *testing.T) {
		var gets atomic.Int32
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
			if r.Method == http.MethodGet && in.Header.Get("Last-Event-ID") != "b_1" {
				t.Errorf("a resume with Last-Event-ID %q", in.Header.Get("Last-Event-ID"))
			}
			if r.Method == http.MethodGet && gets.Add(1)%2 == 0 {
				w.WriteHeader(http.StatusServiceUnavailable) // every other attempt fails; both kinds count
				return
			}
			sseStart(w)
			sseEvent(w, "b_1", 100*time.Millisecond, "")
		})
		c := newConn(t, f, nil)
		mustWrite(t, c, request(mcp.IntID(1), "tools/call", `{}`))
		m := readMsg(t, c)
		if m.ID != mcp.IntID(1) || m.Error == nil || !strings.Contains(m.Error.Message, "attempts") {
			t.Errorf("Read %v %v", m, m.Error)
		}
		if m.Error != nil && string(m.Error.Data) != transport.LostAnswerData {
			t.Errorf("error data %s, want transport.LostAnswerData", m.Error.Data)
		}
		if n := f.count(http.MethodGet); n != MaxStreamResumes {
			t.Errorf("%d GETs, want MaxStreamResumes (%d)", n, MaxStreamResumes)
		}
	})
}
