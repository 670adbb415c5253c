package streamhttp

// Tests of the POST body read bound (Options.BodyReadTimeout): a
// body that never completes is answered 408 and its connection closed;
// answers that last longer than the bound are not cut.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/mcp"
)

// slowBody sends a POST's headers and part of its body on a raw
// connection, then waits for the server's answer without sending more.
func slowBody(t *testing.T, e *httpEnv, framing, part string) (*http.Response, []byte, net.Conn) {
	t.Helper()
	conn, err := net.Dial("tcp", e.TS.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: " + httpenv.AcceptBoth + "\r\n" + framing + "\r\n"
	if _, err := io.WriteString(conn, head+part); err != nil {
		t.Fatal(err)
	}
	// The hang guard, not a synchronisation: the answer is awaited.
	_ = conn.SetReadDeadline(time.Now().Add(httpenv.HangGuard))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	// Nothing follows: the server closed the connection.
	if n, err := br.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("after the 408 the connection stayed open (read %d, %v)", n, err)
	}
	return resp, body, conn
}

func TestHTTPBodyReadTimeout(t *testing.T) {
	e := newHTTPEnv(t, echoServer(), &Options{BodyReadTimeout: 50 * time.Millisecond})
	body := httpenv.InitBody(1, "{}")
	for _, tc := range []struct{ name, framing, part string }{
		{"Content-Length", fmt.Sprintf("Content-Length: %d\r\n", len(body)), body[:len(body)/2]},
		{"chunked", "Transfer-Encoding: chunked\r\n", fmt.Sprintf("%x\r\n%s\r\n", len(body)/2, body[:len(body)/2])},
		{"headers only", fmt.Sprintf("Content-Length: %d\r\n", len(body)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := e.sub(t)
			resp, raw, _ := slowBody(t, e, tc.framing, tc.part)
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Fatalf("status %d, want 408: %q", resp.StatusCode, raw)
			}
			if !resp.Close {
				t.Errorf("408 without Connection: close (%q)", resp.Header.Get("Connection"))
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if err := e.WC.Check(raw); err != nil {
				t.Errorf("408 body does not conform: %v\n%s", err, raw)
			}
			if m := httpenv.ParseMsg(t, raw); m.Error == nil || m.Error.Code != mcp.CodeInvalidRequest {
				t.Errorf("408 body %s, want a -32600 error", raw)
			}
		})
	}
	if n := e.h.SessionCount(); n != 0 {
		t.Errorf("%d sessions after stalled initializes", n)
	}
	// A body that arrives in time is served as before.
	e.Initialize("{}")
}

// TestHTTPBodyReadTimeoutFallback: a ResponseWriter without read
// deadlines (a recorder) still bounds the body: the request body is
// closed when the time is up.
func TestHTTPBodyReadTimeoutFallback(t *testing.T) {
	h := NewHandler(echoServer(), &Options{BodyReadTimeout: 20 * time.Millisecond})
	defer h.Close()
	pr, pw := io.Pipe()
	defer pw.Close()
	r := httptest.NewRequest(http.MethodPost, "/", pr)
	r.Host = "localhost"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", httpenv.AcceptBoth)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r) // returns once the pipe is closed
	if w.Code != http.StatusRequestTimeout || w.Header().Get("Connection") != "close" {
		t.Fatalf("status %d, Connection %q: %s", w.Code, w.Header().Get("Connection"), w.Body.Bytes())
	}
}

// TestHTTPBodyReadTimeoutSparesLongAnswers: once the body is read the
// bound no longer applies: a legacy SSE answer and a 2026 JSON answer
// that take several times the bound arrive whole, their handlers not
// cancelled: the bound ends with the body.
func TestHTTPBodyReadTimeoutSparesLongAnswers(t *testing.T) {
	const bound = 30 * time.Millisecond
	s := echoServer()
	slow := func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		_ = req.Progress(ctx, 1, 0, "started") // with a token: an SSE answer
		select {
		case <-time.After(5 * bound): // what is tested: an answer longer than the bound
		case <-ctx.Done():
			return nil, fmt.Errorf("cancelled: %w", context.Cause(ctx))
		}
		return &mcp.CallToolResult{Content: mcp.Contents{&mcp.TextContent{Text: "slow ok"}}}, nil
	}
	s.AddRawTool(&mcp.Tool{Name: "slow"}, slow)
	m := newModernEnv(t, s, &Options{BodyReadTimeout: bound})

	t.Run("legacy SSE", func(t *testing.T) {
		e := m.legacy.sub(t)
		sid := e.Initialize("{}")
		id := e.ID()
		st := e.OpenSSE(e.Post(sid, httpenv.ToolCall(id, "slow", "", "tok")))
		stream := st.Prime(0)
		expectProgress(t, st, stream, 1, 1)
		f, msg := st.Message()
		if text, isErr := httpenv.ToolText(t, msg); text != "slow ok" || isErr {
			t.Errorf("slow answered %q (isError %v), event %v", text, isErr, f)
		}
		st.End()
	})
	t.Run("2026 JSON", func(t *testing.T) {
		m := m.Sub(t)
		id := m.ID()
		res := m.WantOK(m.Send(httpenv.Req26(id, mcp.MethodToolsCall, map[string]any{"name": "slow"}), true, httpenv.H26(mcp.MethodToolsCall, "slow")...), id)
		if text, isErr := httpenv.ResultText(t, res); text != "slow ok" || isErr {
			t.Errorf("slow answered %q (isError %v)", text, isErr)
		}
	})
}
