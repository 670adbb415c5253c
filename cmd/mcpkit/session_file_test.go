package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// TestSessionFile: --session-file keeps a legacy session between
// invocations: the second command continues it (no initialize, the same
// Mcp-Session-Id); a file that holds no session, or one of another URL,
// is reported and replaced; a modern connection removes it; a stdio
// target refuses the flag.
func TestSessionFile(t *testing.T) {
	s := server.New(nil)
	if err := server.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *server.CallToolRequest, in struct {
		S string `json:"s"`
	}) (string, error) {
		return "echo " + in.S, nil
	}); err != nil {
		t.Fatal(err)
	}
	h := streamhttp.NewHandler(s, nil)
	type post struct{ method, session string }
	var mu sync.Mutex
	var posts []post
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var env struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &env, json.RejectUnknownMembers(false))
			mu.Lock()
			posts = append(posts, post{env.Method, r.Header.Get("Mcp-Session-Id")})
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	taken := func() []post {
		mu.Lock()
		defer mu.Unlock()
		p := posts
		posts = nil
		return p
	}
	file := filepath.Join(t.TempDir(), "session.json")
	stored := func() sessionFile {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var sf sessionFile
		if err := json.Unmarshal(data, &sf); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("the session file's mode: %v %v", fi.Mode(), err)
		}
		return sf
	}
	call := func(args ...string) result {
		t.Helper()
		r := mcpkit(t, append([]string{"call", "--session-file", file}, args...)...)
		expect(t, r, 0, "echo hi")
		return r
	}

	call("--era", "legacy", ts.URL, "echo", "s=hi")
	first := stored()
	if first.URL != ts.URL || first.Session.SessionID == "" || first.Session.ProtocolVersion != mcp.LatestLegacy {
		t.Fatalf("stored %+v", first)
	}
	taken()
	call("--era", "legacy", ts.URL, "echo", "s=hi")
	for _, p := range taken() {
		if p.method == mcp.MethodInitialize || p.session != first.Session.SessionID {
			t.Errorf("second invocation: %s in session %q, want session %q continued", p.method, p.session, first.Session.SessionID)
		}
	}
	if again := stored(); again.Session.SessionID != first.Session.SessionID {
		t.Errorf("the stored session changed to %q", again.Session.SessionID)
	}

	for name, content := range map[string]string{
		"not JSON":    "{",
		"no session":  `{"url":"` + ts.URL + `","session":{}}`,
		"another URL": `{"url":"http://127.0.0.1:1/mcp","session":{"sessionId":"x","protocolVersion":"` + mcp.LatestLegacy + `"}}`,
	} {
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		r := call("--era", "legacy", ts.URL, "echo", "s=hi")
		if !strings.Contains(r.stderr, "opening a new session") {
			t.Errorf("%s: stderr lacks the warning: %s", name, r.stderr)
		}
		if sf := stored(); sf.URL != ts.URL || sf.Session.SessionID == "" || sf.Session.SessionID == "x" {
			t.Errorf("%s: stored %+v", name, sf)
		}
	}

	call("--era", "modern", ts.URL, "echo", "s=hi")
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("after a modern connection the session file is still there: %v", err)
	}
	r := mcpkit(t, "call", "--session-file", file, "echo", "s=hi", "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "HTTP targets only") {
		t.Errorf("stdio target: exit %d, stderr %s", r.code, r.stderr)
	}
}
