package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// introAS is an introspection endpoint: answers by token, a count of
// calls, and the credentials of the last call.
type introAS struct {
	srv    *httptest.Server
	calls  atomic.Int32
	mu     sync.Mutex
	answer map[string]map[string]any // by token; absent: inactive
	status int                       // non-zero: answer this status
	raw    string                    // non-empty: answer this body
	block  bool                      // wait for the caller to give up
	authz  string                    // Authorization header of the last call
	form   map[string]string         // form of the last call
}

func newIntroAS(t *testing.T) *introAS {
	t.Helper()
	a := &introAS{answer: map[string]map[string]any{}}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.calls.Add(1)
		if r.Method != http.MethodPost || r.ParseForm() != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		a.mu.Lock()
		a.authz = r.Header.Get("Authorization")
		a.form = map[string]string{}
		for k := range r.PostForm {
			a.form[k] = r.PostForm.Get(k)
		}
		ans, status, raw, block := a.answer[r.PostForm.Get("token")], a.status, a.raw, a.block
		a.mu.Unlock()
		switch {
		case block:
			<-r.Context().Done()
			return
		case status != 0:
			http.Error(w, "no", status)
			return
		case raw != "":
			_, _ = w.Write([]byte(raw))
			return
		case ans == nil:
			ans = map[string]any{"active": false}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.MarshalWrite(w, ans)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *introAS) set(f func(a *introAS)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f(a)
}

type introEnv struct {
	as  *introAS
	now time.Time
	v   *IntrospectionVerifier
}

func newIntroEnv(t *testing.T, edit func(*IntrospectionOptions)) *introEnv {
	t.Helper()
	e := &introEnv{as: newIntroAS(t), now: time.Unix(1_800_000_000, 0)}
	o := IntrospectionOptions{
		Endpoint: e.as.srv.URL + "/introspect", Audience: testResource,
		ClientID: "rs", ClientSecret: "s3cret", now: func() time.Time { return e.now },
	}
	if edit != nil {
		edit(&o)
	}
	var err error
	if e.v, err = NewIntrospectionVerifier(&o); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *introEnv) active(token string, exp time.Time, extra map[string]any) {
	ans := map[string]any{"active": true, "sub": "alice", "iss": "https://as.example.com", "aud": testResource,
		"scope": "mcp:read mcp:write", "client_id": "c1", "exp": exp.Unix()}
	for k, v := range extra {
		if v == nil {
			delete(ans, k)
		} else {
			ans[k] = v
		}
	}
	e.as.set(func(a *introAS) { a.answer[token] = ans })
}

func TestIntrospectionActive(t *testing.T) {
	e := newIntroEnv(t, nil)
	exp := e.now.Add(time.Hour)
	e.active("tok", exp, map[string]any{"cnf": map[string]any{"jkt": "thumb"}, "aud": []string{"x", testResource}})
	ti, err := e.v.Verify(context.Background(), "tok")
	if err != nil {
		t.Fatal(err)
	}
	if ti.Subject != "alice" || ti.Issuer != "https://as.example.com" || !ti.Expiration.Equal(exp) || ti.JKT != "thumb" ||
		!ti.HasScope("mcp:write") || len(ti.Audience) != 2 || ti.Extra["client_id"] != "c1" || ti.Principal() != "https://as.example.com alice" {
		t.Fatalf("token info %+v", ti)
	}
	// client_secret_basic by default, with the token hinted.
	e.as.mu.Lock()
	authz, form := e.as.authz, e.as.form
	e.as.mu.Unlock()
	if authz != "Basic cnM6czNjcmV0" || form["token"] != "tok" || form["token_type_hint"] != "access_token" || form["client_secret"] != "" {
		t.Fatalf("authorization %q, form %v", authz, form)
	}
	// Cached: no second call; the copy handed out is the caller's own.
	ti.Scopes[0] = "changed"
	ti2, err := e.v.Verify(context.Background(), "tok")
	if err != nil || e.as.calls.Load() != 1 || ti2.Scopes[0] != "mcp:read" {
		t.Fatalf("second verify: %v, %d calls, scopes %v", err, e.as.calls.Load(), ti2.Scopes)
	}
}

func TestIntrospectionRefused(t *testing.T) {
	for name, extra := range map[string]map[string]any{
		"inactive":             {"active": false},
		"other audience":       {"aud": "https://other.example.com/mcp"},
		"no audience":          {"aud": nil},
		"no sub":               {"sub": nil},
		"expired":              {"exp": float64(1_800_000_000)},
		"not yet valid":        {"nbf": float64(1_800_000_000 + 3600)},
		"other issuer":         {"iss": "https://evil.example.com"},
		"cnf without jkt":      {"cnf": map[string]any{"x5t#S256": "abc"}},
		"DPoP without cnf.jkt": {"token_type": "DPoP"},
		"scope not a string":   {"scope": []string{"a"}},
		"exp not a number":     {"exp": "soon"},
		"active not boolean?":  {"active": "true"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newIntroEnv(t, func(o *IntrospectionOptions) { o.Issuer = "https://as.example.com" })
			e.active("tok", e.now.Add(time.Hour), extra)
			for i := range 2 {
				_, err := e.v.Verify(context.Background(), "tok")
				want := ErrInvalidToken
				if name == "active not boolean?" {
					want = ErrUnavailable
				}
				if !errors.Is(err, want) {
					t.Fatalf("error %v, want %v", err, want)
				}
				// Refusals are not cached: each verify asks again.
				if n := e.as.calls.Load(); n != int32(i+1) {
					t.Fatalf("%d calls after %d verifies", n, i+1)
				}
			}
		})
	}
}

func TestIntrospectionCacheBounds(t *testing.T) {
	t.Run("by exp", func(t *testing.T) {
		e := newIntroEnv(t, nil)
		e.active("tok", e.now.Add(30*time.Second), nil)
		start := e.now
		for _, at := range []time.Duration{0, 29 * time.Second} {
			e.now = start.Add(at)
			if _, err := e.v.Verify(context.Background(), "tok"); err != nil {
				t.Fatal(err)
			}
		}
		if n := e.as.calls.Load(); n != 1 {
			t.Fatalf("%d calls within exp, want 1", n)
		}
		e.now = start.Add(30 * time.Second)
		if _, err := e.v.Verify(context.Background(), "tok"); !errors.Is(err, ErrInvalidToken) || e.as.calls.Load() != 2 {
			t.Fatalf("at exp: %v, %d calls", err, e.as.calls.Load())
		}
	})
	t.Run("by CacheTTL", func(t *testing.T) {
		e := newIntroEnv(t, func(o *IntrospectionOptions) { o.CacheTTL = 10 * time.Second })
		e.active("tok", e.now.Add(time.Hour), nil)
		start := e.now
		for i, at := range []time.Duration{0, 9 * time.Second, 10 * time.Second, 19 * time.Second, 20 * time.Second} {
			e.now = start.Add(at)
			if _, err := e.v.Verify(context.Background(), "tok"); err != nil {
				t.Fatal(err)
			}
			want := []int32{1, 1, 2, 2, 3}[i]
			if n := e.as.calls.Load(); n != want {
				t.Fatalf("at +%v: %d calls, want %d", at, n, want)
			}
		}
	})
	t.Run("default bound", func(t *testing.T) {
		e := newIntroEnv(t, nil)
		e.active("tok", e.now.Add(time.Hour), nil)
		_, _ = e.v.Verify(context.Background(), "tok")
		e.now = e.now.Add(DefaultIntrospectionCacheTTL - time.Second)
		_, _ = e.v.Verify(context.Background(), "tok")
		e.now = e.now.Add(time.Second)
		_, _ = e.v.Verify(context.Background(), "tok")
		if n := e.as.calls.Load(); n != 2 {
			t.Fatalf("%d calls, want 2", n)
		}
	})
	t.Run("no caching", func(t *testing.T) {
		e := newIntroEnv(t, func(o *IntrospectionOptions) { o.CacheTTL = -1 })
		e.active("tok", e.now.Add(time.Hour), nil)
		_, _ = e.v.Verify(context.Background(), "tok")
		_, _ = e.v.Verify(context.Background(), "tok")
		if n := e.as.calls.Load(); n != 2 {
			t.Fatalf("%d calls, want 2", n)
		}
	})
	t.Run("size", func(t *testing.T) {
		e := newIntroEnv(t, func(o *IntrospectionOptions) { o.CacheSize = 2 })
		for _, tok := range []string{"a", "b", "c", "d"} {
			e.active(tok, e.now.Add(time.Hour), nil)
			if _, err := e.v.Verify(context.Background(), tok); err != nil {
				t.Fatal(err)
			}
			e.v.mu.Lock()
			n := len(e.v.cache)
			e.v.mu.Unlock()
			if n > 2 {
				t.Fatalf("%d cached results, more than CacheSize", n)
			}
		}
	})
}

func TestIntrospectionFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*IntrospectionOptions)
		as   func(*introAS)
	}{
		"server error":   {as: func(a *introAS) { a.status = http.StatusInternalServerError }},
		"client refused": {as: func(a *introAS) { a.status = http.StatusUnauthorized }},
		"redirect":       {as: func(a *introAS) { a.status = http.StatusFound }},
		"not JSON":       {as: func(a *introAS) { a.raw = "<html>" }},
		"oversized": {
			edit: func(o *IntrospectionOptions) { o.MaxResponseBytes = 300 },
			as:   func(a *introAS) { a.raw = `{"active":true,"pad":"` + strings.Repeat("x", 300) + `"}` },
		},
		"timeout": {
			edit: func(o *IntrospectionOptions) { o.Timeout = 50 * time.Millisecond },
			as:   func(a *introAS) { a.block = true },
		},
		"down": {as: func(a *introAS) { a.srv.Close() }},
	} {
		t.Run(name, func(t *testing.T) {
			e := newIntroEnv(t, tc.edit)
			e.active("tok", e.now.Add(time.Hour), nil)
			e.as.set(tc.as)
			_, err := e.v.Verify(context.Background(), "tok")
			if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalidToken) {
				t.Fatalf("error %v, want ErrUnavailable", err)
			}
			if strings.Contains(err.Error(), "tok\"") {
				t.Fatalf("the error names the token: %v", err)
			}
			// Behind Require: 503, not a 401 that would send the client
			// to re-authorize.
			h := mustRequire(e.v, &Options{Resource: testResource})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			r := httptest.NewRequest("POST", testResource, nil)
			r.Header.Set("Authorization", "Bearer tok")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusServiceUnavailable {
				t.Fatalf("status %d, want 503", w.Code)
			}
			if name == "down" {
				return
			}
			// Never cached: once the server answers, the token is active.
			e.as.set(func(a *introAS) { a.status, a.raw, a.block = 0, "", false })
			e.v.timeout = DefaultIntrospectionTimeout // 50 ms is short for a call under load
			if _, err := e.v.Verify(context.Background(), "tok"); err != nil {
				t.Fatalf("after recovery: %v", err)
			}
		})
	}
}

func TestIntrospectionClientAuth(t *testing.T) {
	for _, tc := range []struct {
		edit      func(*IntrospectionOptions)
		authz     string
		id, secre string
	}{
		// RFC 6749 §2.3.1: form-encoded, then Basic.
		{func(o *IntrospectionOptions) { o.ClientID, o.ClientSecret = "r s", "a:b%" }, "Basic citzOmElM0FiJTI1", "", ""},
		{func(o *IntrospectionOptions) { o.AuthMethod = AuthClientSecretPost }, "", "rs", "s3cret"},
		{func(o *IntrospectionOptions) {
			o.AuthMethod, o.ClientID, o.ClientSecret, o.BearerToken = AuthBearer, "", "", "rs-token"
		}, "Bearer rs-token", "", ""},
	} {
		e := newIntroEnv(t, tc.edit)
		e.active("tok", e.now.Add(time.Hour), nil)
		if _, err := e.v.Verify(context.Background(), "tok"); err != nil {
			t.Fatal(err)
		}
		e.as.mu.Lock()
		authz, form := e.as.authz, e.as.form
		e.as.mu.Unlock()
		if authz != tc.authz || form["client_id"] != tc.id || form["client_secret"] != tc.secre {
			t.Errorf("authorization %q, form %v", authz, form)
		}
	}
	for name, o := range map[string]IntrospectionOptions{
		"no secret":     {Endpoint: "https://as.example.com/i", Audience: testResource, ClientID: "rs"},
		"no bearer":     {Endpoint: "https://as.example.com/i", Audience: testResource, AuthMethod: AuthBearer},
		"unknown":       {Endpoint: "https://as.example.com/i", Audience: testResource, AuthMethod: "private_key_jwt", ClientID: "a", ClientSecret: "b"},
		"http endpoint": {Endpoint: "http://as.example.com/i", Audience: testResource, ClientID: "a", ClientSecret: "b"},
		"no audience":   {Endpoint: "https://as.example.com/i", ClientID: "a", ClientSecret: "b"},
	} {
		if _, err := NewIntrospectionVerifier(&o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestIntrospectionLongToken: a token over MaxIntrospectedTokenBytes is
// refused without a call to the authorization server.
func TestIntrospectionLongToken(t *testing.T) {
	e := newIntroEnv(t, nil)
	long := strings.Repeat("a", MaxIntrospectedTokenBytes+1)
	e.active(long, e.now.Add(time.Hour), nil)
	if _, err := e.v.Verify(context.Background(), long); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("error %v, want ErrInvalidToken", err)
	}
	if n := e.as.calls.Load(); n != 0 {
		t.Fatalf("%d calls to the authorization server, want none", n)
	}
}
