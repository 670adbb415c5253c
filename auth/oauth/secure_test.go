package oauth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://as.example.com/token", true},
		{"HTTPS://AS.example.com:8443/t", true},
		{"http://localhost:3000/token", true},
		{"http://LOCALHOST/token", true},
		{"http://127.0.0.1:9/token", true},
		{"http://127.8.9.10/token", true},
		{"http://[::1]:8080/token", true},
		{"http://as.example.com/token", false},
		{"http://localhost.example.com/token", false},
		{"http://127.0.0.1.example.com/token", false},
		{"http://10.0.0.1/token", false},
		{"http://[::2]/token", false},
		{"http://0.0.0.0/token", false},
		{"ftp://as.example.com/token", false},
		{"https:///token", false},
		{"/token", false},
		{"https://user:pw@as.example.com/token", false},
		{"https://as.example.com/token#frag", false},
		{"", false},
		{"https://as.example.com/%zz", false},
	} {
		_, err := checkURL("token endpoint", tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err = %v, want ok %v", tc.url, err, tc.ok)
		}
		var ie *InsecureURLError
		if err != nil && (!errors.As(err, &ie) || ie.Endpoint != "token endpoint" || !strings.Contains(err.Error(), "token endpoint")) {
			t.Errorf("%q: err = %#v, want an *InsecureURLError naming the endpoint", tc.url, err)
		}
	}
}

// TestInsecureEndpoints: every URL the flow takes from a server (the
// issuer, the endpoints of its metadata, resource_metadata) must be
// https, or http on a loopback host; another is refused with an
// *InsecureURLError before any request is made to it.
func TestInsecureEndpoints(t *testing.T) {
	const far = "http://as.example.test"
	for _, tc := range []struct {
		name, endpoint string
		as             func(*fakeAS)
		rs             func(*fakeRS)
		tr             func(*Transport)
	}{
		{name: "issuer", endpoint: "issuer", rs: func(s *fakeRS) { s.authServers = []string{far} }},
		{name: "token endpoint", endpoint: "token endpoint", as: func(a *fakeAS) { a.endpoints = map[string]string{"token_endpoint": far + "/token"} }},
		{name: "authorization endpoint", endpoint: "authorization endpoint", as: func(a *fakeAS) {
			a.endpoints = map[string]string{"authorization_endpoint": far + "/authorize"}
		}},
		{name: "registration endpoint", endpoint: "registration endpoint", as: func(a *fakeAS) {
			a.endpoints = map[string]string{"registration_endpoint": far + "/register"}
		}},
		{name: "resource_metadata", endpoint: "resource_metadata", rs: func(s *fakeRS) { s.prmURL = far + "/prm" }},
		{name: "client ID metadata document", endpoint: "client ID metadata document", as: func(a *fakeAS) { a.cimd = true },
			tr: func(tr *Transport) { tr.ClientIDMetadataURL = far + "/client.json" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.as, tc.rs, tc.tr)
			rec := &recorder{base: http.DefaultTransport}
			e.tr.Base = rec
			e.tr.Authorize = Headless(&http.Client{Transport: rec})
			_, err := e.post("x")
			var ie *InsecureURLError
			if !errors.As(err, &ie) || !strings.Contains(ie.Endpoint, tc.endpoint) || !strings.Contains(err.Error(), far) {
				t.Fatalf("err = %v, want an *InsecureURLError for the %s", err, tc.endpoint)
			}
			if got := rec.hosts(); strings.Contains(strings.Join(got, " "), "example.test") {
				t.Errorf("requests were made to %q", got)
			}
		})
	}
}

// TestInsecureServer: an MCP server on plain http (not loopback) gets no
// OAuth flow: its tokens would travel in clear. And a resource_metadata
// URL on loopback is refused to a server that is not on loopback: a
// remote server may not steer the client into local services.
func TestInsecureServer(t *testing.T) {
	for _, tc := range []struct {
		name, server, prm, endpoint string
	}{
		{"http server", "http://mcp.example.test/mcp", "", "MCP server"},
		{"loopback resource_metadata", "https://mcp.example.test/mcp", "http://127.0.0.1:9/prm", "resource_metadata"},
		{"loopback resource_metadata, localhost", "https://mcp.example.test/mcp", "http://localhost:9/prm", "resource_metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{base: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
				h := http.Header{}
				chal := "Bearer"
				if tc.prm != "" {
					chal += ` resource_metadata="` + tc.prm + `"`
				}
				h.Set("WWW-Authenticate", chal)
				return &http.Response{StatusCode: http.StatusUnauthorized, Header: h, Body: http.NoBody, Request: r}, nil
			})}
			tr := &Transport{Base: rec, Authorize: Headless(nil)}
			_, err := (&http.Client{Transport: tr}).Get(tc.server)
			var ie *InsecureURLError
			if !errors.As(err, &ie) || !strings.Contains(ie.Endpoint, tc.endpoint) {
				t.Fatalf("err = %v, want an *InsecureURLError for the %s", err, tc.endpoint)
			}
			if got := rec.hosts(); len(got) != 1 {
				t.Errorf("requests: %q, want only the MCP request", got)
			}
		})
	}
}

// TestIDJAGExchangeInsecure: the identity provider's token endpoint must
// be https (or loopback).
func TestIDJAGExchangeInsecure(t *testing.T) {
	rec := &recorder{base: http.DefaultTransport}
	x := &IDJAGExchange{TokenEndpoint: "http://idp.example.test/token", ClientID: "c", IDToken: "id", HTTPClient: &http.Client{Transport: rec}}
	_, err := x.Assertion(context.Background(), &GrantRequest{Issuer: "https://as.example.com", Resource: "https://mcp.example.com/mcp"})
	var ie *InsecureURLError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an *InsecureURLError", err)
	}
	if got := rec.hosts(); len(got) != 0 {
		t.Errorf("requests: %q", got)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// recorder records the URL of every request before passing it on.
type recorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	urls []string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.urls = append(r.urls, req.URL.String())
	r.mu.Unlock()
	if req.URL.Hostname() != "127.0.0.1" && req.URL.Hostname() != "localhost" && r.base == http.DefaultTransport {
		return nil, io.ErrUnexpectedEOF // never leave the machine
	}
	return r.base.RoundTrip(req)
}

func (r *recorder) hosts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, u := range r.urls {
		if p, err := url.Parse(u); err == nil {
			out = append(out, p.Host)
		}
	}
	return out
}
