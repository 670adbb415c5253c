package streamable

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// redirector answers a request to a path of to with a redirect to the
// path's target, and passes every other request to h.
func redirector(status int, to map[string]func() string, h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, in rec) {
		if target, ok := to[r.URL.Path]; ok {
			http.Redirect(w, r, target(), status)
			return
		}
		h(w, r, in)
	}
}

// answerAll answers initialize with session s1 and any other request
// with an empty result.
func answerAll(w http.ResponseWriter, _ *http.Request, in rec) {
	switch {
	case in.Msg == nil:
		w.WriteHeader(http.StatusMethodNotAllowed)
	case in.Msg.Method == mcp.MethodInitialize:
		answerInit(w, in, "s1")
	case in.Msg.IsRequest():
		writeJSON(w, http.StatusOK, result(in.Msg.ID, `{}`))
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// TestRedirectSameOriginFollowed: a 307 or 308 within the origin is
// followed, with the same POST body and every header.
func TestRedirectSameOriginFollowed(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var f *fake
			f = newFake(t, redirector(status, map[string]func() string{
				"/old": func() string { return f.URL + "/mcp" },
			}, answerAll))
			c := New(f.URL+"/old", &Options{Header: http.Header{"Authorization": {"Bearer t"}}})
			t.Cleanup(func() { _ = c.Close() })
			mustWrite(t, c, request(mcp.IntID(1), mcp.MethodInitialize, `{}`))
			readMsg(t, c)
			mustWrite(t, c, request(mcp.IntID(2), "tools/list", ""))
			if m := readMsg(t, c); m.ID != mcp.IntID(2) || m.Error != nil {
				t.Fatalf("answer: %v", m)
			}
			posts := f.of(http.MethodPost)
			if len(posts) != 4 {
				t.Fatalf("POSTs = %v, want 2 redirected and 2 followed", posts)
			}
			last, redirected := posts[3], posts[2]
			if string(last.Body) != string(redirected.Body) || last.Msg.Method != "tools/list" {
				t.Errorf("followed POST body %q, want %q", last.Body, redirected.Body)
			}
			for _, h := range []string{"Authorization", "Mcp-Session-Id", "Mcp-Protocol-Version"} {
				if last.Header.Get(h) == "" || last.Header.Get(h) != redirected.Header.Get(h) {
					t.Errorf("%s after the redirect = %q, before %q", h, last.Header.Get(h), redirected.Header.Get(h))
				}
			}
		})
	}
}

// TestRedirectCrossOriginRefused: a redirect to another origin (here
// another port of the same host), directly or at the end of a chain
// within the origin, fails the request with ErrCrossOriginRedirect and
// the other origin receives nothing.
func TestRedirectCrossOriginRefused(t *testing.T) {
	other := newFake(t, answerAll)
	var f *fake
	f = newFake(t, redirector(http.StatusTemporaryRedirect, map[string]func() string{
		"/direct": func() string { return other.URL + "/mcp" },
		"/chain1": func() string { return f.URL + "/chain2" },
		"/chain2": func() string { return other.URL + "/mcp" },
	}, answerAll))
	for _, path := range []string{"/direct", "/chain1"} {
		c := New(f.URL+path, &Options{NoLegacyFallback: true})
		err := c.Write(testCtx(t), transport.Message{Data: []byte(request(mcp.IntID(1), mcp.MethodInitialize, `{}`))})
		_ = c.Close()
		if !errors.Is(err, ErrCrossOriginRedirect) || !strings.Contains(err.Error(), other.URL) {
			t.Errorf("%s: Write = %v, want ErrCrossOriginRedirect naming %s", path, err, other.URL)
		}
	}
	if n := len(other.of(http.MethodPost)) + len(other.of(http.MethodGet)); n != 0 {
		t.Errorf("the other origin received %d requests", n)
	}
	if n := len(f.of(http.MethodPost)); n != 3 {
		t.Errorf("the first origin received %d POSTs, want 3 (direct, chain1, chain2)", n)
	}
}

// TestRedirectCrossOriginAllowedStripsHeaders: with
// AllowCrossOriginRedirects, the message reaches the other origin but
// none of the MCP headers, credentials, cookies or configured headers
// do (net/http alone would forward Authorization and cookies to
// another port of the same host, and every other header anywhere).
func TestRedirectCrossOriginAllowedStripsHeaders(t *testing.T) {
	other := newFake(t, answerAll)
	var f *fake
	var moved atomic.Bool
	f = newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		if moved.Load() {
			http.Redirect(w, r, other.URL+"/mcp", http.StatusPermanentRedirect)
			return
		}
		answerAll(w, r, in)
	})
	c := newConn(t, f, &Options{AllowCrossOriginRedirects: true, Header: http.Header{
		"Authorization": {"Bearer secret"}, "X-Api-Key": {"k"}, "Cookie": {"c=1"}, "Dpop": {"proof"},
	}})
	mustWrite(t, c, request(mcp.IntID(1), mcp.MethodInitialize, `{}`))
	readMsg(t, c)
	moved.Store(true)
	mustWrite(t, c, request(mcp.IntID(2), "tools/list", ""))
	if m := readMsg(t, c); m.ID != mcp.IntID(2) || m.Error != nil {
		t.Fatalf("answer: %v", m)
	}
	in := other.next(t, http.MethodPost)
	if in.Msg.Method != "tools/list" {
		t.Fatalf("the other origin got %v", in)
	}
	for k := range in.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Authorization", "X-Api-Key", "Cookie", "Dpop", "Mcp-Session-Id", "Mcp-Protocol-Version":
			t.Errorf("%s reached the other origin: %q", k, in.Header.Get(k))
		}
	}
}

// TestRedirectPolicyErrors: a 301/302/303 to a POST is refused (it would
// become a GET, the message lost); a loop stops at MaxRedirects; the
// caller's own CheckRedirect is consulted after the policy and can
// refuse, never widen.
func TestRedirectPolicyErrors(t *testing.T) {
	other := newFake(t, answerAll)
	var f *fake
	f = newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		switch r.URL.Path {
		case "/found":
			http.Redirect(w, r, f.URL+"/mcp", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, f.URL+"/loop", http.StatusTemporaryRedirect)
		case "/other":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		default:
			http.Redirect(w, r, f.URL+"/found", http.StatusTemporaryRedirect)
		}
	})
	errRefused := errors.New("the caller's policy")
	userCalls := 0
	refuse := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { userCalls++; return errRefused }}
	accept := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	cases := []struct {
		path string
		opts *Options
		want error
	}{
		{"/found", nil, ErrRedirectDropsBody},
		{"/loop", &Options{MaxRedirects: 3}, ErrTooManyRedirects},
		{"/loop", nil, ErrTooManyRedirects},
		{"/mcp", &Options{HTTPClient: refuse}, errRefused},
		{"/other", &Options{HTTPClient: accept}, ErrCrossOriginRedirect},
	}
	for _, tc := range cases {
		o := Options{NoLegacyFallback: true}
		if tc.opts != nil {
			o = *tc.opts
			o.NoLegacyFallback = true
		}
		c := New(f.URL+tc.path, &o)
		err := c.Write(testCtx(t), transport.Message{Data: []byte(request(mcp.IntID(1), mcp.MethodInitialize, `{}`))})
		_ = c.Close()
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: Write = %v, want %v", tc.path, err, tc.want)
		}
	}
	if userCalls != 1 {
		t.Errorf("the caller's CheckRedirect ran %d times, want 1", userCalls)
	}
	if refuse.CheckRedirect == nil || accept.Jar != nil {
		t.Error("the caller's client was modified")
	}
	if n := len(other.of(http.MethodPost)); n != 0 {
		t.Errorf("the other origin received %d POSTs", n)
	}
}
