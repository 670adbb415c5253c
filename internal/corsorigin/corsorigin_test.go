package corsorigin

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	named := Parse([]string{" https://App.example.com/ ", "null", "", "http://localhost:3000"})
	wild := Parse([]string{"*"})
	for _, c := range []struct {
		l            List
		origin       string
		ok, explicit bool
	}{
		{named, "https://app.example.com", true, true},
		{named, "HTTPS://APP.EXAMPLE.COM", true, true},
		{named, "http://localhost:3000", true, true},
		{named, "http://localhost:3001", false, false},
		{named, "null", false, false},
		{named, "", false, false},
		{wild, "https://any.example", true, false},
		{wild, "http://127.0.0.1:8080", true, false},
		{wild, "null", false, false},
		{wild, "file://", false, false},
		{wild, "https://u@evil.example", false, false},
		{wild, "https://a.example/path", false, false},
		{wild, "https://a.example?q", false, false},
		{wild, "https://a.example#f", false, false},
		{wild, "https://", false, false},
		{wild, "http://[::1]:8080", true, false},
		{wild, "https://a b.example", false, false},
		{wild, "ftp://a.example", false, false},
		{wild, "https:a.example", false, false},
		{wild, "http://:", false, false},
		{wild, "http://[", false, false},
		{wild, "https://a:b:c", false, false},
		{wild, "https://a.example:", false, false},
		{wild, "https://a%zz.example", false, false},
		{wild, "https://a.example:8443", true, false},
		{wild, "http://[::1]", true, false},
		{wild, "http://[::1]x", false, false},
		{ParseNames([]string{"*", "https://b.example/"}), "https://any.example", false, false},
		{ParseNames([]string{"*", "https://b.example/"}), "https://B.example", true, true},
		{List{}, "https://app.example.com", false, false},
	} {
		ok, explicit := c.l.Match(c.origin)
		if ok != c.ok || explicit != c.explicit {
			t.Errorf("Match(%q) = %v, %v; want %v, %v", c.origin, ok, explicit, c.ok, c.explicit)
		}
	}
}

// TestMatchAnyNoAllocs: a "*" list checks an origin on every request of
// a browser; it used to parse it as a URL, twice a request behind
// Handler.CORS.
func TestMatchAnyNoAllocs(t *testing.T) {
	wild := Parse([]string{"*"})
	if n := testing.AllocsPerRun(100, func() {
		if ok, _ := wild.Match("https://app.example.com:8443"); !ok {
			t.Fatal("refused")
		}
	}); n != 0 {
		t.Fatalf("%v allocations a match, want 0", n)
	}
}

func TestMaxAge(t *testing.T) {
	if got := MaxAge(0, 10*time.Minute); got != "600" {
		t.Errorf("default: %q", got)
	}
	if got := MaxAge(90*time.Second, time.Minute); got != "90" {
		t.Errorf("set: %q", got)
	}
	if got := MaxAge(-1, time.Minute); got != "" {
		t.Errorf("negative: %q", got)
	}
}

// TestPolicyApply: a preflight allowed by origin, method and headers gets
// the answer's headers (prefixed headers echoed, credentials only to a
// listed origin); a refused one gets a reason and no Access-Control-*
// header; a plain request gets the allow and expose headers.
func TestPolicyApply(t *testing.T) {
	p := NewPolicy(PolicyOptions{Origins: []string{"https://app.example", "*"}, Methods: []string{"post"},
		Headers: []string{"Content-Type", "bad header"}, HeaderPrefix: "mcp-param-", Expose: "X-A", Credentials: true})
	pre := func(origin, method, headers string) *http.Request {
		r := httptest.NewRequest(http.MethodOptions, "/", nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Method", method)
		if headers != "" {
			r.Header.Set("Access-Control-Request-Headers", headers)
		}
		return r
	}
	hdr := http.Header{}
	if pf, why := p.Apply(hdr, pre("https://APP.example", "POST", "content-type, mcp-param-region")); !pf || why != "" {
		t.Fatalf("allowed preflight: %v %q", pf, why)
	}
	if got := hdr.Get("Access-Control-Allow-Headers"); got != "content-type, mcp-param-region" {
		t.Errorf("Allow-Headers %q", got)
	}
	if hdr.Get("Access-Control-Allow-Origin") != "https://APP.example" || hdr.Get("Access-Control-Allow-Credentials") != "true" ||
		hdr.Get("Access-Control-Allow-Methods") != "POST, OPTIONS" {
		t.Errorf("answer headers %v", hdr)
	}
	hdr = http.Header{}
	if _, why := p.Apply(hdr, pre("https://other.example", "POST", "")); why != "" || hdr.Get("Access-Control-Allow-Origin") != "*" ||
		hdr.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("through *: %q %v", why, hdr)
	}
	for _, r := range []*http.Request{pre("https://app.example", "DELETE", ""), pre("https://app.example", "POST", "x-other"),
		pre("https://app.example", "POST", "mcp-param-"), pre("null", "POST", ""), pre("file://x", "POST", "")} {
		hdr = http.Header{}
		pf, why := p.Apply(hdr, r)
		if !pf || why == "" {
			t.Errorf("%v: not refused", r.Header)
		}
		for name := range hdr {
			if strings.HasPrefix(name, "Access-Control-") {
				t.Errorf("%v: refusal sets %s", r.Header, name)
			}
		}
	}
	hdr = http.Header{}
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Header.Set("Origin", "https://app.example")
	if pf, _ := p.Apply(hdr, r); pf || hdr.Get("Access-Control-Expose-Headers") != "X-A" || hdr.Get("Vary") != "Origin" {
		t.Errorf("plain request: preflight %v, headers %v", pf, hdr)
	}
}
