package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// runningGateway is an "mcpkit gateway --http" process of a test.
type runningGateway struct {
	url, health string
	lines       chan string // its standard error, line by line
	seen        []string    // the lines read so far
}

// startGateway runs "mcpkit gateway ARGS..." (which must include --http)
// and returns once it serves. Cleanup interrupts it and expects a clean
// exit.
func startGateway(t *testing.T, args ...string) *runningGateway {
	t.Helper()
	return startGatewayEnv(t, nil, args...)
}

// startGatewayEnv is startGateway with env added to the environment.
func startGatewayEnv(t *testing.T, env []string, args ...string) *runningGateway {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"gateway"}, args...)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &runningGateway{lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case g.lines <- sc.Text():
			default:
			}
		}
		close(g.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("gateway did not exit cleanly on SIGINT: %v\n%s", err, strings.Join(g.seen, "\n"))
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("gateway did not exit within 20s of SIGINT")
		}
	})
	m := g.waitLine(t, regexp.MustCompile(`gateway serving MCP on (http://\S+/mcp), health (http://\S+/healthz)`))
	g.url, g.health = m[1], m[2]
	return g
}

// waitLine returns the submatches of the first line of the gateway's
// standard error that matches re, waiting for it.
func (g *runningGateway) waitLine(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	for _, l := range g.seen {
		if m := re.FindStringSubmatch(l); m != nil {
			return m
		}
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-g.lines:
			if !ok {
				t.Fatalf("gateway exited before printing %q:\n%s", re, strings.Join(g.seen, "\n"))
			}
			g.seen = append(g.seen, l)
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-timeout:
			t.Fatalf("gateway printed no %q within 30s:\n%s", re, strings.Join(g.seen, "\n"))
		}
	}
}

// getHealth fetches the health endpoint.
func getHealth(t *testing.T, u string) (int, healthStatus) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st healthStatus
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("health body %q: %v", b, err)
	}
	return resp.StatusCode, st
}

// TestGatewayCommand: "mcpkit gateway" in front of "mcpkit serve --stdio"
// spoken to in either era, called over HTTP by mcpkit in both eras: a
// prefixed tool, and a tool that asks for input (a form elicitation,
// bridged by the gateway). /healthz says ready; --addr-file has the
// address.
func TestGatewayCommand(t *testing.T) {
	for _, upEra := range []string{"legacy", "modern"} {
		t.Run("upstream-"+upEra, func(t *testing.T) {
			t.Parallel()
			addrFile := filepath.Join(t.TempDir(), "addr")
			g := startGateway(t, "--http", "127.0.0.1:0", "--addr-file", addrFile, "--prefix", "demo", "--era", upEra,
				"--", bin, "serve", "--stdio")
			b, err := os.ReadFile(addrFile)
			if err != nil || !strings.HasPrefix(g.url, "http://"+string(b)+"/") {
				t.Errorf("addr file %q (%v), endpoint %s", b, err, g.url)
			}
			for _, era := range []string{"legacy", "modern"} {
				expect(t, mcpkit(t, "call", "--era", era, g.url, "demo_add", "a=2", "b=40"), 0, `{"sum":42}`)
				expect(t, mcpkit(t, "call", "--era", era, "--accept-defaults", g.url, "demo_signup"), 0, "Welcome, guest (free plan, 1 seats)!")
			}
			expect(t, mcpkit(t, "call", g.url, "add", "a=1", "b=2"), exitProtocol) // only the prefixed name exists
			code, st := getHealth(t, g.health)
			if code != http.StatusOK || st.Status != "ready" || len(st.Upstreams) != 1 {
				t.Fatalf("health %d %+v", code, st)
			}
			if u := st.Upstreams[0]; u.Name != "demo" || u.State != "ready" || u.Era != upEra || u.Server != "mcpkit-demo" || u.Tools == 0 {
				t.Errorf("upstream health %+v", u)
			}
			resp, err := http.Post(g.health, "application/json", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("POST %s: %s", g.health, resp.Status)
			}
			g.waitLine(t, regexp.MustCompile(`gateway: upstream ready.*upstream=demo era=`+upEra))
		})
	}
}

// TestGatewayConfigFile: several upstreams from a configuration file,
// their stderr prefixed, a per-tool rate limit answered with the
// rate-limit error, and an upstream that cannot start reported by
// /healthz (503) while the others serve.
func TestGatewayConfigFile(t *testing.T) {
	t.Parallel()
	cfg := map[string]any{
		"server":     map[string]any{"name": "test-gateway", "version": "1.2.3"},
		"http":       map[string]any{"addr": "127.0.0.1:0"},
		"gateway":    map[string]any{"restartMin": "1h"}, // the broken upstream is not retried during the test
		"rateLimits": map[string]any{"tool": map[string]any{"every": "1h", "burst": 1}},
		"upstreams": []any{
			map[string]any{"name": "one", "prefix": "a", "command": []string{bin, "serve", "--stdio"}, "callTimeout": "1m"},
			map[string]any{"name": "two", "prefix": "b", "command": []string{"sh", "-c", `echo "up on $GW_WORD" >&2; exec "$0" serve --stdio`, bin},
				"env": map[string]string{"GW_WORD": "stderr"}},
			map[string]any{"name": "broken", "prefix": "c", "command": []string{"sh", "-c", "exit 3"}, "connectTimeout": "20s"},
		},
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gateway.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--config", path)
	g.waitLine(t, regexp.MustCompile(`^\[two\] up on stderr$`))

	r := mcpkit(t, "inspect", g.url)
	expect(t, r, 0, "server:       test-gateway 1.2.3", "  a_add: Adds two numbers.", "  b_add: Adds two numbers.")
	if strings.Contains(r.stdout, "c_") {
		t.Errorf("the broken upstream's items are listed:\n%s", r.stdout)
	}
	for _, era := range []string{"legacy", "modern"} {
		// One call of each tool per hour: the second one is refused.
		tool := map[string]string{"legacy": "a_add", "modern": "b_add"}[era]
		expect(t, mcpkit(t, "call", "--era", era, g.url, tool, "a=2", "b=40"), 0, `{"sum":42}`)
		r := mcpkit(t, "call", "--era", era, g.url, tool, "a=2", "b=40")
		expect(t, r, exitProtocol)
		if !strings.Contains(r.stderr, fmt.Sprint(-32029)) || !strings.Contains(r.stderr, "Rate limit exceeded (tool "+tool+")") {
			t.Errorf("%s: the limited call's error: %s", era, r.stderr)
		}
	}
	code, st := getHealth(t, g.health)
	if code != http.StatusServiceUnavailable || st.Status != "unavailable" || len(st.Upstreams) != 3 {
		t.Fatalf("health %d %+v", code, st)
	}
	for i, want := range []string{"ready", "ready", "down"} {
		if u := st.Upstreams[i]; string(u.State) != want {
			t.Errorf("upstream %s: %s (%s), want %s", u.Name, u.State, u.Err, want)
		}
	}
	if st.Upstreams[2].Err == "" {
		t.Error("the broken upstream's health has no error")
	}
}

// TestGatewayAuth: with auth in the configuration, the MCP endpoint
// answers a request without a token 401 with the RFC 9728 challenge, the
// protected resource metadata names the authorization server, /healthz
// needs no token, and mcpkit logs in (OAuth, headless) and calls through
// the gateway in both eras.
func TestGatewayAuth(t *testing.T) {
	t.Parallel()
	a := startAS(t) // the demo authorization server, JWT tokens
	cfg := map[string]any{
		"http": map[string]any{"addr": "127.0.0.1:0"},
		"auth": map[string]any{
			"authorizationServers": []string{a.issuer},
			"jwt":                  map[string]any{"issuer": a.issuer, "jwksURL": a.issuer + "/jwks", "algorithms": []string{"ES256"}},
			"resourceName":         "test gateway",
			"dpop":                 "optional",
		},
		"upstreams": []any{map[string]any{"name": "demo", "prefix": "demo", "command": []string{bin, "serve", "--stdio"}}},
	}
	b, _ := json.Marshal(cfg)
	path := filepath.Join(t.TempDir(), "gateway.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, "--config", path)
	u, _ := url.Parse(g.url)
	prm := "http://" + u.Host + "/.well-known/oauth-protected-resource/mcp"

	req, _ := http.NewRequest(http.MethodPost, g.url, strings.NewReader(initializeLine))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized ||
		!strings.HasPrefix(ch, "Bearer ") || !strings.Contains(ch, `resource_metadata="`+prm+`"`) {
		t.Fatalf("no token: %s, WWW-Authenticate %q", resp.Status, ch)
	}
	resp, err = http.Get(prm)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ResourceName         string   `json:"resource_name"`
	}
	err = json.UnmarshalRead(resp.Body, &meta, json.RejectUnknownMembers(false))
	resp.Body.Close()
	if err != nil || meta.Resource != g.url || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != a.issuer ||
		meta.ResourceName != "test gateway" {
		t.Fatalf("protected resource metadata %+v (%v)", meta, err)
	}
	if code, st := getHealth(t, g.health); code != http.StatusOK || st.Status != "ready" {
		t.Fatalf("health without a token: %d %+v", code, st)
	}

	env := []string{"MCPKIT_CONFIG_DIR=" + t.TempDir(), headlessEnv + "=1"}
	expect(t, mcpkitEnv(t, env, "call", "--no-auth", g.url, "demo_add", "a=1", "b=2"), exitConn)
	for _, era := range []string{"legacy", "modern"} {
		expect(t, mcpkitEnv(t, env, "call", "--era", era, g.url, "demo_add", "a=2", "b=40"), 0, `{"sum":42}`)
	}
	if reg, authz, toks := a.counts(); reg != 1 || authz != 1 || toks != 1 {
		t.Errorf("registrations %d, authorizations %d, token requests %d; want 1, 1, 1", reg, authz, toks)
	}
	// A DPoP-bound token (dpop optional): its proofs are checked.
	env = []string{"MCPKIT_CONFIG_DIR=" + t.TempDir(), headlessEnv + "=1"}
	expect(t, mcpkitEnv(t, env, "call", "--dpop", g.url, "demo_add", "a=1", "b=2"), 0, `{"sum":3}`)
}

// TestGatewayUsage: command lines and files the gateway refuses, with
// exit code 64 and an error naming the file and the member.
func TestGatewayUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"upstreams": [{"name": "a", "command": ["x"], "callTimeout": "soon"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mcpkit(t, "gateway", "--config", bad)
	expect(t, r, exitUsage)
	if !strings.Contains(r.stderr, "mcpkit: "+bad+`: upstreams[0].callTimeout: time: invalid duration "soon"`) {
		t.Errorf("stderr: %s", r.stderr)
	}
	expect(t, mcpkit(t, "gateway", "--config", bad, "--", bin, "serve", "--stdio"), exitUsage)
	expect(t, mcpkit(t, "gateway", "--http", "127.0.0.1:0"), exitUsage)
	r = mcpkit(t, "gateway", "--prefix", "9bad", "--", bin, "serve", "--stdio")
	expect(t, r, exitUsage)
	if !strings.Contains(r.stderr, `prefix "9bad"`) {
		t.Errorf("bad prefix: %s", r.stderr)
	}
}

// TestGatewayStdioAndURL: the gateway as a stdio server (launched by
// mcpkit call, in both eras) in front of a Streamable HTTP upstream given
// by --url with --header, and in front of a stdio upstream.
func TestGatewayStdioAndURL(t *testing.T) {
	t.Parallel()
	up := startHTTP(t)
	for _, era := range []string{"legacy", "modern"} {
		expect(t, mcpkit(t, "call", "--era", era, "web_add", "a=2", "b=40",
			"--", bin, "gateway", "--url", up, "--header", "X-Test: yes", "--prefix", "web"), 0, `{"sum":42}`)
		expect(t, mcpkit(t, "call", "--era", era, "--accept-defaults", "cmd_signup",
			"--", bin, "gateway", "--stdio", "--prefix", "cmd", "--", bin, "serve", "--stdio"), 0, "Welcome, guest")
	}
}

// roundRobin sends each request to the next of hosts, as a load
// balancer without sticky sessions would, and counts the tools/call
// requests each host got.
type roundRobin struct {
	hosts []string
	mu    sync.Mutex
	n     int
	calls map[string]int
}

func (rr *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	rr.mu.Lock()
	host := rr.hosts[rr.n%len(rr.hosts)]
	rr.n++
	if req.Header.Get("Mcp-Method") == "tools/call" {
		rr.calls[host]++
	}
	rr.mu.Unlock()
	r := req.Clone(req.Context())
	r.URL.Host, r.Host = host, host
	return http.DefaultTransport.RoundTrip(r)
}

// TestGatewayInstances: two gateway processes sharing their sealing keys
// (server.requestStateKeysEnv) in front of one HTTP upstream serve a
// 2026-07-28 client whose requests alternate between them: the
// upstream's elicitation, relayed as an input-required result by one,
// is answered through the other.
func TestGatewayInstances(t *testing.T) {
	t.Parallel()
	up := startHTTP(t)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	env := []string{"GW_TEST_STATE_KEYS=" + hex.EncodeToString(key)}
	b, _ := json.Marshal(map[string]any{
		"server":    map[string]any{"requestStateKeysEnv": "GW_TEST_STATE_KEYS"},
		"http":      map[string]any{"addr": "127.0.0.1:0"},
		"upstreams": []any{map[string]any{"name": "demo", "prefix": "demo", "url": up}},
	})
	path := filepath.Join(t.TempDir(), "gateway.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	g1 := startGatewayEnv(t, env, "--config", path)
	g2 := startGatewayEnv(t, env, "--config", path)
	u1, _ := url.Parse(g1.url)
	u2, _ := url.Parse(g2.url)
	rr := &roundRobin{hosts: []string{u1.Host, u2.Host}, calls: map[string]int{}}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := streamable.New(g1.url, &streamable.Options{HTTPClient: &http.Client{Transport: rr}})
	c, err := client.Connect(ctx, tr, &client.Options{
		ProtocolVersion: mcp.Version20260728,
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada", "plan": "pro", "seats": 2}}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "demo_signup"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(got), "Welcome, Ada (pro plan, 2 seats)!") || res.IsError {
		t.Fatalf("result %s (isError %v)", got, res.IsError)
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.calls[u1.Host] == 0 || rr.calls[u2.Host] == 0 {
		t.Fatalf("tools/call requests by instance: %v; want both", rr.calls)
	}
}
