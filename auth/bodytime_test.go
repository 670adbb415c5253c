package auth

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRequireBodyReadTimeout: a client with a valid token whose body
// stalls while the middleware reads it for per-tool scopes gets 408 and
// its connection closed, instead of holding the connection forever.
func TestRequireBodyReadTimeout(t *testing.T) {
	sv := staticVerifier{"good": {Subject: "a", Scopes: []string{"mcp"}}}
	s := &seen{}
	h := mustRequire(sv, &Options{
		Resource:        testResource,
		Scopes:          []string{"mcp"},
		ToolScopes:      map[string][]string{"delete": {"admin"}},
		BodyReadTimeout: 50 * time.Millisecond, // the test's own bound: the answer is awaited
	})(echoHandler(s))
	ts := httptest.NewServer(h)
	defer ts.Close()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete"}}`
	head := "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer good\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := io.WriteString(conn, head+body[:10]); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // a hang guard, not a synchronisation
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close || !strings.Contains(string(raw), "-32600") {
		t.Fatalf("status %d, close %v: %s; want 408, Connection: close and a -32600 error", resp.StatusCode, resp.Close, raw)
	}
	if n, err := br.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("after the 408 the connection stayed open (read %d, %v)", n, err)
	}
	if s.calls != 0 {
		t.Errorf("the handler ran %d times", s.calls)
	}
}
