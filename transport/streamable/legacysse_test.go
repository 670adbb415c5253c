package streamable

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// oldServer answers every POST without ?sessionId with 405, and a GET
// with an event stream that sends first (when not empty), then stays open
// until the client leaves. posts receives the bodies POSTed to the
// announced endpoint.
func oldServer(t *testing.T, first string) (*httptest.Server, chan string) {
	posts := make(chan string, 8)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Query().Get("sessionId") == "s1":
			b, _ := io.ReadAll(r.Body)
			posts <- string(b)
			w.WriteHeader(http.StatusAccepted)
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			if first != "" {
				fmt.Fprint(w, first)
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			http.Error(w, "old transport only", http.StatusMethodNotAllowed)
		}
	}))
	t.Cleanup(ts.Close)
	return ts, posts
}

const initMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestLegacyFallback: a first request refused 405 makes the Conn GET the
// URL; an endpoint event on the same origin switches it to the old
// transport, which sends the refused message again to the endpoint and
// reads the stream's message events.
func TestLegacyFallback(t *testing.T) {
	ts, posts := oldServer(t, "event: endpoint\ndata: /messages?sessionId=s1\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\n")
	c := New(ts.URL+"/sse", nil)
	defer c.Close()
	if err := c.Write(testCtx(t), transport.Message{Data: []byte(initMsg)}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if !c.Legacy() {
		t.Fatal("no fallback")
	}
	if got := <-posts; got != initMsg {
		t.Errorf("POSTed %q", got)
	}
	msg, err := c.Read(testCtx(t))
	if err != nil || !strings.Contains(string(msg), "notifications/message") {
		t.Fatalf("Read = %s, %v", msg, err)
	}
	select {
	case <-c.Listening():
	default:
		t.Error("Listening is not closed once the old transport's stream is up")
	}
}

// TestLegacyFallbackRefused: the fallback does not happen when the
// endpoint is on another origin (the Conn's headers would follow), when
// no endpoint event comes in time, or when it is turned off; the first
// error stands.
func TestLegacyFallbackRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first string
		opts  Options
	}{
		{"another origin", "event: endpoint\ndata: http://elsewhere.example/messages?sessionId=s1\n\n", Options{}},
		{"no endpoint event", "event: message\ndata: {}\n\n", Options{LegacyEndpointTimeout: 50 * time.Millisecond}},
		{"turned off", "event: endpoint\ndata: /messages?sessionId=s1\n\n", Options{NoLegacyFallback: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, _ := oldServer(t, tc.first)
			c := New(ts.URL+"/sse", &tc.opts)
			defer c.Close()
			err := c.Write(testCtx(t), transport.Message{Data: []byte(initMsg)})
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("Write = %v, want the 405", err)
			}
			if c.Legacy() {
				t.Error("fell back")
			}
		})
	}
}

// TestLegacyOversizedEvent: on the one stream of the 2024-11-05
// transport, an event over MaxEventBytes is dropped and the connection
// kept: Read returns a *transport.TooLargeError naming the response (a
// jsonrpc.Conn fails its call), and the events after it arrive.
func TestLegacyOversizedEvent(t *testing.T) {
	big := strings.Repeat("x", 2048)
	ts, posts := oldServer(t, "event: endpoint\ndata: /messages?sessionId=s1\n\n"+
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":\""+big+"\"}}\n\n"+
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\n")
	c := New(ts.URL+"/sse", &Options{MaxEventBytes: 1024})
	defer c.Close()
	if err := c.Write(testCtx(t), transport.Message{Data: []byte(initMsg)}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	recv(t, posts, "the initialize POST")
	readTooLarge(t, c, mcp.IntID(1), false)
	if m := readMsg(t, c); m.Method != "notifications/message" {
		t.Fatalf("after it: %v", m)
	}
	if err := c.usable(); err != nil {
		t.Errorf("the connection was lost: %v", err)
	}
}
