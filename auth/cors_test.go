package auth

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

const (
	corsApp   = "https://app.example.com"
	corsOther = "https://evil.example.net"
)

// corsDo sends one request to h with the given headers (a name repeated
// in two entries sends two values) and returns the recorded answer.
func corsDo(h http.Handler, method string, hdr [][2]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "/.well-known/oauth-protected-resource/mcp", nil)
	for _, kv := range hdr {
		r.Header.Add(kv[0], kv[1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func preflightHdr(origin, method, headers string) [][2]string {
	h := [][2]string{{"Origin", origin}, {"Access-Control-Request-Method", method}}
	if headers != "" {
		h = append(h, [2]string{"Access-Control-Request-Headers", headers})
	}
	return h
}

// noACHeaders fails when a refused answer carries any Access-Control-*
// header (the browser must fail the preflight).
func noACHeaders(t *testing.T, name string, w *httptest.ResponseRecorder) {
	t.Helper()
	for k := range w.Header() {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Errorf("%s: refused answer carries %s: %v", name, k, w.Header())
		}
	}
}

func prmWithCORS(t *testing.T, c *CORSOptions) http.Handler {
	t.Helper()
	h, err := ProtectedResourceHandlerWith(ProtectedResourceMetadata{
		Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://as.example.com"},
	}, &ProtectedResourceOptions{CORS: c})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestMetadataCORSPreflight: the protected resource metadata with a CORS
// allow-list answers the preflights of listed origins (any case, a
// trailing slash, the MCP-Protocol-Version header a client sends) and
// refuses others with 403 and no Access-Control-* header.
func TestMetadataCORSPreflight(t *testing.T) {
	h := prmWithCORS(t, &CORSOptions{AllowedOrigins: []string{corsApp, "http://localhost:3000/"}, AllowedHeaders: []string{"traceparent", "bad header"}})
	ok := []struct {
		name, origin, method, headers string
	}{
		{"GET", corsApp, "GET", ""},
		{"GET with MCP-Protocol-Version", corsApp, "GET", "mcp-protocol-version"},
		{"HEAD", corsApp, "HEAD", ""},
		{"case", "HTTPS://App.Example.com", "GET", ""},
		{"listed with slash", "http://localhost:3000", "GET", "accept, mcp-protocol-version"},
		{"extra header", corsApp, "GET", "traceparent"},
	}
	for _, c := range ok {
		w := corsDo(h, http.MethodOptions, preflightHdr(c.origin, c.method, c.headers))
		hd := w.Header()
		if w.Code != http.StatusNoContent || hd.Get("Access-Control-Allow-Origin") != c.origin ||
			hd.Get("Access-Control-Allow-Methods") != "GET, HEAD, OPTIONS" ||
			!strings.Contains(hd.Get("Access-Control-Allow-Headers"), "mcp-protocol-version") ||
			hd.Get("Access-Control-Max-Age") != "600" || hd.Get("Vary") != "Origin" ||
			hd.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("%s: %d %v", c.name, w.Code, hd)
		}
		if strings.Contains(hd.Get("Access-Control-Allow-Headers"), "bad") {
			t.Errorf("%s: a name that is not a token is allowed: %v", c.name, hd)
		}
	}
	refused := []struct {
		name string
		hdr  [][2]string
		why  string
	}{
		{"origin not listed", preflightHdr(corsOther, "GET", ""), "Origin not allowed"},
		{"null", preflightHdr("null", "GET", ""), "Origin not allowed"},
		{"no origin", [][2]string{{"Access-Control-Request-Method", "GET"}}, "exactly one Origin"},
		{"two origins", append(preflightHdr(corsApp, "GET", ""), [2]string{"Origin", corsApp}), "exactly one Origin"},
		{"method not served", preflightHdr(corsApp, "POST", ""), `method "POST"`},
		{"header not allowed", preflightHdr(corsApp, "GET", "x-secret"), `header "x-secret"`},
	}
	for _, c := range refused {
		w := corsDo(h, http.MethodOptions, c.hdr)
		noACHeaders(t, c.name, w)
		var body struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != http.StatusForbidden ||
			body.Error != "invalid_request" || !strings.Contains(body.Description, c.why) || w.Header().Get("Vary") != "Origin" {
			t.Errorf("%s: %d %v %s", c.name, w.Code, w.Header(), w.Body)
		}
	}
}

// TestMetadataCORSGet: a GET from a listed origin is readable (its
// Access-Control-Allow-Origin names it); from another origin the
// document is served (it is public) with no Access-Control-* header, so
// the browser keeps it from the page.
func TestMetadataCORSGet(t *testing.T) {
	h := prmWithCORS(t, &CORSOptions{AllowedOrigins: []string{corsApp}})
	w := corsDo(h, http.MethodGet, [][2]string{{"Origin", corsApp}})
	if w.Code != 200 || w.Header().Get("Access-Control-Allow-Origin") != corsApp || w.Header().Get("Vary") != "Origin" ||
		!strings.Contains(w.Body.String(), `"resource":"https://mcp.example.com/mcp"`) {
		t.Errorf("listed: %d %v %s", w.Code, w.Header(), w.Body)
	}
	for _, hdr := range [][][2]string{{{"Origin", corsOther}}, nil} {
		w = corsDo(h, http.MethodGet, hdr)
		if w.Code != 200 || w.Header().Get("Vary") != "Origin" {
			t.Errorf("%v: %d %v", hdr, w.Code, w.Header())
		}
		noACHeaders(t, "GET unlisted", w)
	}
	// An OPTIONS that is no preflight reaches the handler.
	w = corsDo(h, http.MethodOptions, [][2]string{{"Origin", corsOther}})
	if w.Code != http.StatusNoContent || w.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Errorf("OPTIONS: %d %v", w.Code, w.Header())
	}
	// POST stays 405, with the CORS headers of a listed origin.
	w = corsDo(h, http.MethodPost, [][2]string{{"Origin", corsApp}})
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Access-Control-Allow-Origin") != corsApp {
		t.Errorf("POST: %d %v", w.Code, w.Header())
	}
}

// TestMetadataCORSWildcard: "*" allows every http and https origin with
// a literal "*", never credentials nor Private Network Access; "null"
// and other schemes are refused; a listed origin beside "*" is named
// and gets Private Network Access.
func TestMetadataCORSWildcard(t *testing.T) {
	h := prmWithCORS(t, &CORSOptions{AllowedOrigins: []string{"*", corsApp}, MaxAge: -1})
	w := corsDo(h, http.MethodOptions, append(preflightHdr(corsOther, "GET", ""), [2]string{"Access-Control-Request-Private-Network", "true"}))
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "*" ||
		w.Header().Get("Access-Control-Allow-Private-Network") != "" || w.Header().Get("Access-Control-Max-Age") != "" {
		t.Errorf("*: %d %v", w.Code, w.Header())
	}
	w = corsDo(h, http.MethodOptions, append(preflightHdr(corsApp, "GET", ""), [2]string{"Access-Control-Request-Private-Network", "true"}))
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != corsApp ||
		w.Header().Get("Access-Control-Allow-Private-Network") != "true" {
		t.Errorf("listed: %d %v", w.Code, w.Header())
	}
	for _, o := range []string{"null", "chrome-extension://abc", "https://app.example.com/path"} {
		w = corsDo(h, http.MethodOptions, preflightHdr(o, "GET", ""))
		if w.Code != http.StatusForbidden {
			t.Errorf("%s: %d %v", o, w.Code, w.Header())
		}
		noACHeaders(t, o, w)
	}
	w = corsDo(h, http.MethodGet, [][2]string{{"Origin", corsOther}})
	if w.Header().Get("Access-Control-Allow-Origin") != "*" || w.Header().Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("GET *: %v", w.Header())
	}
}

// TestMetadataCORSDefault: without ProtectedResourceOptions.CORS the
// document stays open to every origin, preflight included, and an empty
// allow-list refuses every preflight.
func TestMetadataCORSDefault(t *testing.T) {
	for _, opts := range []*ProtectedResourceOptions{nil, {}} {
		h, err := ProtectedResourceHandlerWith(ProtectedResourceMetadata{
			Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://as.example.com"},
		}, opts)
		if err != nil {
			t.Fatal(err)
		}
		w := corsDo(h, http.MethodOptions, preflightHdr(corsOther, "GET", "mcp-protocol-version"))
		if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%v: %d %v", opts, w.Code, w.Header())
		}
	}
	w := corsDo(prmWithCORS(t, &CORSOptions{}), http.MethodOptions, preflightHdr(corsApp, "GET", ""))
	if w.Code != http.StatusForbidden {
		t.Errorf("empty list: %d", w.Code)
	}
	noACHeaders(t, "empty list", w)
	w = corsDo(CORS(nil, []string{"GET"}, http.NotFoundHandler()), http.MethodOptions, preflightHdr(corsApp, "GET", ""))
	if w.Code != http.StatusForbidden {
		t.Errorf("nil options: %d", w.Code)
	}
}

// TestCORSTokenEndpoint: CORS around a POST endpoint (a token or
// registration endpoint) allows the headers a browser OAuth client sends
// (Content-Type, Authorization, DPoP) and exposes DPoP-Nonce and
// WWW-Authenticate; the wrapped handler sees the real request only.
func TestCORSTokenEndpoint(t *testing.T) {
	calls := 0
	methods := make([]string, 1, 4) // room to append: the caller's array stays untouched
	methods[0] = "POST"
	h := CORS(&CORSOptions{AllowedOrigins: []string{corsApp}, MaxAge: 90 * time.Second}, methods,
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls++
			w.Header().Set("DPoP-Nonce", "n1")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"use_dpop_nonce"}`)
		}))
	if extra := methods[:2]; extra[1] != "" {
		t.Errorf("CORS wrote into the caller's methods: %q", extra)
	}
	w := corsDo(h, http.MethodOptions, preflightHdr(corsApp, "POST", "content-type,dpop, authorization"))
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Methods") != "POST, OPTIONS" ||
		w.Header().Get("Access-Control-Max-Age") != "90" || calls != 0 {
		t.Errorf("preflight: %d %v (handler calls %d)", w.Code, w.Header(), calls)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if w = corsDo(h, http.MethodOptions, preflightHdr(corsApp, m, "")); w.Code != http.StatusForbidden {
			t.Errorf("%s: %d", m, w.Code)
		}
	}
	w = corsDo(h, http.MethodPost, [][2]string{{"Origin", corsApp}})
	if w.Code != http.StatusBadRequest || calls != 1 || w.Header().Get("Access-Control-Allow-Origin") != corsApp ||
		w.Header().Get("Access-Control-Expose-Headers") != "DPoP-Nonce, WWW-Authenticate" {
		t.Errorf("POST: %d %v (handler calls %d)", w.Code, w.Header(), calls)
	}
	w = corsDo(h, http.MethodPost, [][2]string{{"Origin", corsOther}})
	if calls != 2 {
		t.Errorf("POST from another origin: handler calls %d", calls)
	}
	noACHeaders(t, "POST from another origin", w)
}

// TestMountProtectedResourceWithCORS: both well-known URIs get the policy.
func TestMountProtectedResourceWithCORS(t *testing.T) {
	mux := http.NewServeMux()
	err := MountProtectedResourceWith(mux, ProtectedResourceMetadata{
		Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://as.example.com"},
	}, &ProtectedResourceOptions{CORS: &CORSOptions{AllowedOrigins: []string{corsApp}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{WellKnownPath, WellKnownPath + "/mcp"} {
		for origin, want := range map[string]int{corsApp: http.StatusNoContent, corsOther: http.StatusForbidden} {
			r := httptest.NewRequest(http.MethodOptions, p, nil)
			r.Header.Set("Origin", origin)
			r.Header.Set("Access-Control-Request-Method", "GET")
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			if w.Code != want {
				t.Errorf("%s from %s: %d, want %d", p, origin, w.Code, want)
			}
		}
	}
	if err := MountProtectedResourceWith(http.NewServeMux(), ProtectedResourceMetadata{Resource: "x"}, nil); err == nil {
		t.Error("an invalid document was mounted")
	}
}
