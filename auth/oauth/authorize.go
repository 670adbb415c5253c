package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

// AuthorizeFunc performs the user-facing step of the authorization code
// flow: it sends the user agent to authURL and returns the query
// parameters of the redirect back to the client's redirect URI (code,
// state, iss, or error and error_description). It does not validate them.
type AuthorizeFunc func(ctx context.Context, authURL string) (url.Values, error)

// Headless returns an AuthorizeFunc for tests and automated
// environments: it GETs the authorization URL with hc (nil:
// http.DefaultClient's transport) without following redirects, and reads
// the redirect's parameters from the Location header. It works with
// authorization servers that authorize without user interaction.
func Headless(hc *http.Client) AuthorizeFunc {
	return func(ctx context.Context, authURL string) (url.Values, error) {
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if hc != nil {
			c.Transport = hc.Transport
			c.Jar = hc.Jar
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode < 300 || resp.StatusCode > 399 {
			return nil, fmt.Errorf("oauth: authorization endpoint answered HTTP %s, not a redirect", resp.Status)
		}
		loc, err := resp.Location()
		if err != nil {
			return nil, fmt.Errorf("oauth: authorization redirect: %w", err)
		}
		return loc.Query(), nil
	}
}

// Loopback receives the authorization redirect on a loopback listener
// (RFC 8252 §7.3), for desktop and command-line applications.
//
//	lb := &oauth.Loopback{Addr: "127.0.0.1:8976"}
//	t := &oauth.Transport{RedirectURL: lb.RedirectURL(), Authorize: lb.Authorize}
type Loopback struct {
	// Addr is the loopback address to listen on, with a fixed port so that
	// the redirect URI stays the one registered. Default "127.0.0.1:8976".
	Addr string
	// Path is the redirect URI's path. Default "/callback".
	Path string
	// Open shows authURL to the user, typically by launching a browser.
	// Default: print it to Out.
	Open func(authURL string) error
	// Out receives the printed URL. Default os.Stderr.
	Out io.Writer
}

func (l *Loopback) addr() string {
	if l.Addr == "" {
		return "127.0.0.1:8976"
	}
	return l.Addr
}

func (l *Loopback) path() string {
	if l.Path == "" {
		return "/callback"
	}
	return l.Path
}

// RedirectURL returns the redirect URI the listener serves.
func (l *Loopback) RedirectURL() string {
	return "http://" + l.addr() + l.path()
}

// Authorize implements AuthorizeFunc: it listens on Addr, shows authURL
// and waits for the redirect (or ctx's end). Only a GET of Path whose
// state equals the state of authURL ends the wait, with whatever it
// carries (a code, or an error); other requests are answered 400 (wrong
// or missing state), 404 (another path) or 405 (not a GET) and ignored.
// An authURL without a state (not one a Transport makes) is ended by the
// first GET of Path.
func (l *Loopback) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	host, _, err := net.SplitHostPort(l.addr())
	if err != nil {
		return nil, fmt.Errorf("oauth: loopback address: %w", err)
	}
	if !isLoopbackHost(host) {
		return nil, fmt.Errorf("oauth: %s is not a loopback address", l.addr())
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", l.addr())
	if err != nil {
		return nil, fmt.Errorf("oauth: loopback listener: %w", err)
	}
	// The redirect that ends the login carries the state of authURL
	// (RFC 6749 §10.12). Anything else reaching the listener — another
	// local process, a stale browser tab, a forged or replayed redirect —
	// is answered with an error page and the login keeps waiting, so that
	// it cannot be aborted (or fed a code) by whoever can reach loopback.
	var want string
	if u, err := url.Parse(authURL); err == nil {
		want = u.Query().Get("state")
	}
	got := make(chan url.Values, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		if r.URL.Path != l.path() {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet {
			h.Set("Allow", http.MethodGet)
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		q := r.URL.Query()
		if want != "" && subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(want)) != 1 {
			http.Error(w, "This is not the authorization response this login is waiting for (wrong or missing state). It was ignored.", http.StatusBadRequest)
			return
		}
		select {
		case got <- q:
		default:
		}
		h.Set("Content-Type", "text/plain; charset=utf-8")
		if q.Get("error") != "" {
			fmt.Fprintln(w, "Authorization failed. You can close this window.")
			return
		}
		fmt.Fprintln(w, "Authorization complete. You can close this window.")
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	open := l.Open
	if open == nil {
		out := l.Out
		if out == nil {
			out = os.Stderr
		}
		open = func(u string) error {
			_, err := fmt.Fprintf(out, "Open this URL in a browser to authorize:\n\n  %s\n\n", u)
			return err
		}
	}
	if err := open(authURL); err != nil {
		return nil, fmt.Errorf("oauth: opening the authorization URL: %w", err)
	}
	select {
	case q := <-got:
		return q, nil
	case <-ctx.Done():
		return nil, errors.Join(errors.New("oauth: waiting for the authorization redirect"), ctx.Err())
	}
}

// isLoopbackRedirect reports whether a redirect URI points at the local
// machine (then the client is a native application, SEP-837).
func isLoopbackRedirect(redirect string) bool {
	u, err := url.Parse(redirect)
	if err != nil {
		return false
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return u.Scheme != "" // private-use URI schemes are native too
	}
	return isLoopbackHost(u.Hostname())
}
