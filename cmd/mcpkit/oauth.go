package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/auth/oauth"
)

// headlessEnv, when set to 1, makes the OAuth flow follow the
// authorization URL without a browser (oauth.Headless). It is for the
// tests, whose authorization server redirects at once; it is deliberately
// not a documented flag.
const headlessEnv = "MCPKIT_OAUTH_HEADLESS"

// oauthClient returns the HTTP client of an HTTP target: one whose
// transport runs the OAuth flow when the server answers 401, with the
// tokens kept in the file store.
func oauthClient(f *clientFlags, stderr io.Writer) (*http.Client, error) {
	path, err := configPath("oauth.json")
	if err != nil {
		return nil, &exitError{code: exitConn, err: fmt.Errorf("the OAuth token store: %w", err)}
	}
	lb := &oauth.Loopback{Out: stderr}
	if f.open {
		lb.Open = func(u string) error {
			fmt.Fprintf(stderr, "Opening a browser to authorize; if none opens, visit:\n\n  %s\n\n", u)
			if err := openBrowser(u); err != nil {
				fmt.Fprintf(stderr, "mcpkit: could not open a browser: %v\n", err)
			}
			return nil
		}
	}
	t := &oauth.Transport{
		RedirectURL: lb.RedirectURL(),
		Authorize:   lb.Authorize,
		ClientName:  "mcpkit",
		Store:       &fileStore{path: path},
	}
	if f.dpop {
		if t.DPoP, err = dpopKey(); err != nil {
			return nil, &exitError{code: exitConn, err: fmt.Errorf("the DPoP key: %w", err)}
		}
	}
	if os.Getenv(headlessEnv) == "1" {
		t.Authorize = oauth.Headless(nil)
	}
	if f.clientID != "" {
		secret := f.clientSecret
		if secret == "" {
			secret = os.Getenv("MCPKIT_CLIENT_SECRET")
		}
		t.Client = &oauth.ClientInfo{ClientID: f.clientID, ClientSecret: secret}
	}
	return &http.Client{Transport: t}, nil
}

// dpopKey loads the DPoP key of mcpkit from dpop.pem in the
// configuration directory, or makes one and saves it there (mode 0600):
// tokens stored in oauth.json stay bound to it across runs.
func dpopKey() (*oauth.DPoPKey, error) {
	path, err := configPath("dpop.pem")
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err == nil {
		blk, _ := pem.Decode(b)
		if blk == nil || blk.Type != "EC PRIVATE KEY" {
			return nil, fmt.Errorf("%s holds no EC PRIVATE KEY", path)
		}
		k, err := x509.ParseECPrivateKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return oauth.NewDPoPKeyFrom(k)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// O_EXCL: of two first runs at once, one key wins and the other run
	// fails rather than overwrite it.
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := pem.Encode(fh, &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}); err != nil {
		fh.Close()
		return nil, err
	}
	if err := fh.Close(); err != nil {
		return nil, err
	}
	return oauth.NewDPoPKeyFrom(k)
}

// configPath is file in mcpkit's configuration directory:
// $MCPKIT_CONFIG_DIR, else mcpkit in the user's configuration directory
// (~/.config/mcpkit on Linux).
func configPath(file string) (string, error) {
	if dir := os.Getenv("MCPKIT_CONFIG_DIR"); dir != "" {
		return filepath.Join(dir, file), nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "mcpkit", file), nil
}

func openBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// fileStore is an oauth.Store kept in one JSON file (mode 0600), read on
// every lookup and rewritten (atomically, by rename) on every change, so
// that separate invocations of mcpkit share registrations and tokens.
// Entries are keyed by the authorization server's issuer, as the Store
// interface defines, and tokens also by resource.
type fileStore struct {
	path string
	mu   sync.Mutex
}

// storeFile is the file's content.
type storeFile struct {
	// Clients maps an issuer to the client registered there.
	Clients map[string]oauth.ClientInfo `json:"clients"`
	// Tokens maps an issuer, then a resource, to its token.
	Tokens map[string]map[string]oauth.Token `json:"tokens"`
}

var _ oauth.Store = (*fileStore)(nil)

func (s *fileStore) load() (*storeFile, error) {
	sf := &storeFile{Clients: map[string]oauth.ClientInfo{}, Tokens: map[string]map[string]oauth.Token{}}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return sf, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, sf, json.RejectUnknownMembers(false)); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	if sf.Clients == nil {
		sf.Clients = map[string]oauth.ClientInfo{}
	}
	if sf.Tokens == nil {
		sf.Tokens = map[string]map[string]oauth.Token{}
	}
	return sf, nil
}

func (s *fileStore) save(sf *storeFile) error {
	b, err := json.Marshal(sf, jsontext.WithIndent("  "))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".oauth-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}

// update loads the file, applies f and saves it.
func (s *fileStore) update(f func(*storeFile)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sf, err := s.load()
	if err != nil {
		return err
	}
	f(sf)
	return s.save(sf)
}

// Client implements oauth.Store.
func (s *fileStore) Client(_ context.Context, issuer string) (*oauth.ClientInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sf, err := s.load()
	if err != nil {
		return nil, err
	}
	c, ok := sf.Clients[issuer]
	if !ok {
		return nil, nil
	}
	return &c, nil
}

// SetClient implements oauth.Store.
func (s *fileStore) SetClient(_ context.Context, issuer string, c *oauth.ClientInfo) error {
	return s.update(func(sf *storeFile) {
		if c == nil {
			delete(sf.Clients, issuer)
			return
		}
		sf.Clients[issuer] = *c
	})
}

// Token implements oauth.Store.
func (s *fileStore) Token(_ context.Context, issuer, resource string) (*oauth.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sf, err := s.load()
	if err != nil {
		return nil, err
	}
	t, ok := sf.Tokens[issuer][resource]
	if !ok {
		return nil, nil
	}
	return &t, nil
}

// SetToken implements oauth.Store.
func (s *fileStore) SetToken(_ context.Context, issuer, resource string, t *oauth.Token) error {
	return s.update(func(sf *storeFile) {
		if t == nil {
			delete(sf.Tokens[issuer], resource)
			if len(sf.Tokens[issuer]) == 0 {
				delete(sf.Tokens, issuer)
			}
			return
		}
		if sf.Tokens[issuer] == nil {
			sf.Tokens[issuer] = map[string]oauth.Token{}
		}
		sf.Tokens[issuer][resource] = *t
	})
}
