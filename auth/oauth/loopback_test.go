package oauth

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// freeLoopback returns a loopback address nobody listens on.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// get GETs u and returns the status, or -1 when the request failed.
func get(u string) int {
	resp, err := http.Get(u)
	if err != nil {
		return -1
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestLoopbackIgnoresStrayRequests: a request to the callback with the
// wrong state (another local process, a stale browser tab), one without
// a state, one to another path and a POST are answered with an error and
// the login keeps waiting for the real redirect, which completes it.
func TestLoopbackIgnoresStrayRequests(t *testing.T) {
	lb := &Loopback{Addr: freeLoopback(t)}
	stray := make(chan []int, 1)
	lb.Open = func(authURL string) error {
		go func() {
			cb := lb.RedirectURL()
			var got []int
			got = append(got, get(cb+"?code=forged&state=wrong"))
			got = append(got, get(cb+"?code=forged"))
			got = append(got, get(cb+"?error=access_denied&state=wrong"))
			got = append(got, get("http://"+lb.Addr+"/elsewhere?code=forged"))
			resp, err := http.Post(cb, "application/x-www-form-urlencoded", strings.NewReader("code=forged"))
			if err == nil {
				resp.Body.Close()
				got = append(got, resp.StatusCode)
			}
			stray <- got
			get(authURL) // the browser, at last: the AS redirects to the callback
		}()
		return nil
	}
	e := newEnv(t, nil, nil, func(tr *Transport) { tr.RedirectURL = lb.RedirectURL(); tr.Authorize = lb.Authorize })
	mustOK(t, e, "x")
	want := []int{400, 400, 400, 404, 405}
	if got := <-stray; !slices.Equal(got, want) {
		t.Errorf("stray requests answered %v, want %v", got, want)
	}
	if n := e.as.tokenRequests(); n != 1 {
		t.Errorf("%d token requests", n)
	}
}

// TestLoopbackErrorWithState: an error redirect carrying the right state
// ends the login with that error.
func TestLoopbackErrorWithState(t *testing.T) {
	lb := &Loopback{Addr: freeLoopback(t)}
	lb.Open = func(authURL string) error {
		u, err := url.Parse(authURL)
		if err != nil {
			return err
		}
		go get(lb.RedirectURL() + "?error=access_denied&state=" + url.QueryEscape(u.Query().Get("state")))
		return nil
	}
	e := newEnv(t, nil, nil, func(tr *Transport) { tr.RedirectURL = lb.RedirectURL(); tr.Authorize = lb.Authorize })
	_, err := e.post("x")
	var ae *AuthorizationError
	if !errors.As(err, &ae) || ae.Code != "access_denied" {
		t.Fatalf("err = %v, want access_denied", err)
	}
}

// TestLoopbackContext: with only stray requests, the login ends with its
// context.
func TestLoopbackContext(t *testing.T) {
	lb := &Loopback{Addr: freeLoopback(t)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lb.Open = func(authURL string) error {
		go func() {
			get(lb.RedirectURL() + "?code=forged&state=wrong")
			cancel()
		}()
		return nil
	}
	_, err := lb.Authorize(ctx, "https://as.example.com/authorize?state=s1")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
