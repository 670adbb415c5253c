package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/ratelimit"
)

// goodGatewayConfig sets every member of the configuration file.
const goodGatewayConfig = `{
  "server": {"name": "acme-gateway", "version": "2.0.0", "title": "Acme", "instructions": "Tools of Acme.",
             "requestStateKeysEnv": "GW_TEST_KEYS"},
  "http": {
    "addr": "127.0.0.1:0", "path": "/mcp", "healthPath": "/healthz",
    "allowedHosts": ["mcp.acme.test"], "allowedOrigins": ["https://app.acme.test"],
    "maxBodyBytes": 1048576, "bodyReadTimeout": "10s", "sessionTTL": "15m",
    "maxSessions": 500, "maxSessionsPerPrincipal": 5, "stateless": false, "noLegacySSE": true,
    "shutdownTimeout": "5s"
  },
  "stdio": false,
  "gateway": {"inputTimeout": "2m", "maxPending": 50, "maxPendingPerClient": 4, "maxInFlightPerClient": 2,
              "restartMin": "1s", "restartMax": "1m"},
  "auth": {
    "resource": "https://mcp.acme.test/mcp",
    "authorizationServers": ["https://login.acme.test"],
    "jwt": {"issuer": "https://login.acme.test", "jwksURL": "https://login.acme.test/jwks", "algorithms": ["ES256"]},
    "scopes": ["mcp"], "methodScopes": {"tools/call": ["mcp:tools"]}, "toolScopes": {"fs_write_file": ["files:write"]},
    "scopesSupported": ["mcp", "mcp:tools", "files:write"], "resourceName": "Acme MCP",
    "resourceDocumentation": "https://acme.test/docs", "visibility": true, "dpop": "optional"
  },
  "rateLimits": {
    "principal": {"every": "100ms", "burst": 20},
    "session": {"every": "1s", "burst": 5},
    "tool": {"every": "10ms", "burst": 100}
  },
  "upstreams": [
    {"name": "fs", "prefix": "fs", "command": ["npx", "@modelcontextprotocol/server-filesystem", "/data"],
     "env": {"NODE_ENV": "production", "TOKEN": "${GW_TEST_TOKEN}"}, "dir": "/srv",
     "protocolVersion": "2025-06-18", "roots": ["file:///data"],
     "callTimeout": "1m", "maxInFlight": 8, "maxConnections": 3, "queueTimeout": "5s",
     "connectTimeout": "20s", "healthInterval": "10s"},
    {"name": "search", "prefix": "search", "url": "https://search.acme.test/mcp",
     "headers": {"Authorization": "Bearer $GW_TEST_TOKEN", "X-Price": "$$5"}, "healthInterval": "-1s"}
  ]
}`

func TestGatewayConfigGood(t *testing.T) {
	t.Setenv("GW_TEST_TOKEN", "s3cret")
	t.Setenv("GW_TEST_KEYS", strings.Repeat("ab", 32)+", "+strings.Repeat("cd", 32))
	c, err := parseGatewayConfig("gw.json", []byte(goodGatewayConfig))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.plan("gw.json", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if p.addr != "127.0.0.1:0" || p.path != "/mcp" || p.healthPath != "/healthz" || p.stdio || p.shutdown != 5*time.Second {
		t.Errorf("listeners: %+v", p)
	}
	h := p.http
	if h.MaxBodyBytes != 1<<20 || h.BodyReadTimeout != 10*time.Second || h.SessionTTL != 15*time.Minute ||
		h.MaxSessions != 500 || h.MaxSessionsPerPrincipal != 5 || h.LegacySSE || h.Stateless ||
		!reflect.DeepEqual(h.AllowedHosts, []string{"mcp.acme.test"}) || !reflect.DeepEqual(h.AllowedOrigins, []string{"https://app.acme.test"}) {
		t.Errorf("streamhttp options: %+v", h)
	}
	if p.authOpts.MaxBodyBytes != 1<<20 || p.authOpts.BodyReadTimeout != 10*time.Second ||
		!reflect.DeepEqual(p.authOpts.ToolScopes, map[string][]string{"fs_write_file": {"files:write"}}) {
		t.Errorf("auth options: %+v", p.authOpts)
	}
	o := p.opts
	if o.InputTimeout != 2*time.Minute || o.MaxPending != 50 || o.MaxPendingPerClient != 4 || o.MaxInFlightPerClient != 2 ||
		o.RestartMin != time.Second || o.RestartMax != time.Minute {
		t.Errorf("gateway limits: %+v", o)
	}
	so := o.Server
	if !reflect.DeepEqual(so.Info, mcp.Implementation{Name: "acme-gateway", Title: "Acme", Version: "2.0.0"}) || so.Instructions != "Tools of Acme." {
		t.Errorf("server identity: %+v %q", so.Info, so.Instructions)
	}
	if len(so.RequestStateKeys) != 2 || so.RequestStateKeys[0][0] != 0xab || so.RequestStateKeys[1][0] != 0xcd {
		t.Errorf("request state keys: %x", so.RequestStateKeys)
	}
	if so.Visibility == nil || len(so.Interceptors) != 1 {
		t.Errorf("visibility %v, %d interceptors (want the rate limiter)", so.Visibility != nil, len(so.Interceptors))
	}
	if len(o.Upstreams) != 2 {
		t.Fatalf("%d upstreams", len(o.Upstreams))
	}
	fs, search := o.Upstreams[0], o.Upstreams[1]
	if fs.Name != "fs" || fs.Prefix != "fs" || !reflect.DeepEqual(fs.Command, []string{"npx", "@modelcontextprotocol/server-filesystem", "/data"}) ||
		!reflect.DeepEqual(fs.Env, []string{"NODE_ENV=production", "TOKEN=s3cret"}) || fs.Dir != "/srv" ||
		fs.ProtocolVersion != "2025-06-18" || !reflect.DeepEqual(fs.Roots, []mcp.Root{{URI: "file:///data"}}) ||
		fs.CallTimeout != time.Minute || fs.MaxInFlight != 8 || fs.ConnectTimeout != 20*time.Second ||
		fs.MaxConnections != 3 || fs.QueueTimeout != 5*time.Second ||
		fs.HealthInterval != 10*time.Second || fs.Stderr == nil {
		t.Errorf("command upstream: %+v", fs)
	}
	if search.URL != "https://search.acme.test/mcp" || search.Header.Get("Authorization") != "Bearer s3cret" ||
		search.Header.Get("X-Price") != "$5" || search.HealthInterval != -time.Second || search.Stderr != nil {
		t.Errorf("url upstream: %+v", search)
	}
	if got := c.RateLimits.Principal.rate(); got != ratelimit.Every(100*time.Millisecond, 20) {
		t.Errorf("principal rate %+v", got)
	}

	// The file itself, through loadGatewayConfig.
	path := filepath.Join(t.TempDir(), "gw.json")
	if err := os.WriteFile(path, []byte(goodGatewayConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadGatewayConfig(path); err != nil {
		t.Fatal(err)
	}
	if _, err := loadGatewayConfig(path + ".missing"); err == nil || !strings.HasPrefix(err.Error(), path+".missing: ") {
		t.Errorf("missing file: %v", err)
	}
	big := append([]byte(`{"upstreams":[]`), bytes.Repeat([]byte(" "), maxConfigBytes)...)
	if err := os.WriteFile(path, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadGatewayConfig(path); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized file: %v", err)
	}
}

// TestGatewayConfigErrors: every error names the file and the member.
func TestGatewayConfigErrors(t *testing.T) {
	const cmd = `"command": ["srv"]`
	for _, tc := range []struct{ name, json, want string }{
		{"no upstreams", `{}`, "gw.json: upstreams: at least one upstream is required"},
		{"unknown top-level field", `{"upstream": []}`, "gw.json: upstream: unknown field"},
		{"unknown nested field", `{"upstreams": [{"name": "a", ` + cmd + `, "comand": ["x"]}]}`, "gw.json: upstreams[0].comand: unknown field"},
		{"unknown deep field", `{"auth": {"jwt": {"isuer": "x"}}, "upstreams": []}`, "gw.json: auth.jwt.isuer: unknown field"},
		{"bad duration", `{"upstreams": [{"name": "a", ` + cmd + `, "callTimeout": "30 seconds"}]}`, `gw.json: upstreams[0].callTimeout: time: unknown unit " seconds"`},
		{"duration as a number", `{"gateway": {"inputTimeout": 30}, "upstreams": []}`, `gw.json: gateway.inputTimeout: want a duration string such as "30s"`},
		{"wrong type", `{"upstreams": [{"name": 7}]}`, "gw.json: upstreams[0].name: want a string, not a JSON number"},
		{"syntax", "{\n\"upstreams\": [\n{\"name\": \"a\",,}]}", "gw.json: line 3"},
		{"duplicate member", `{"upstreams": [{"name": "a", "name": "b", ` + cmd + `}]}`, "gw.json: line 1, upstreams[0].name: duplicate object member name"},
		{"same prefix", `{"upstreams": [{"name": "a", "prefix": "p", ` + cmd + `}, {"name": "b", "prefix": "p", ` + cmd + `}]}`, `gw.json: upstreams[1].prefix: "p" is also the prefix of upstreams[0]`},
		{"same name", `{"upstreams": [{"name": "a", ` + cmd + `}, {"name": "a", ` + cmd + `}]}`, `gw.json: upstreams[1].name: "a" is also the name of upstreams[0]`},
		{"no name", `{"upstreams": [{` + cmd + `}]}`, "gw.json: upstreams[0].name: required"},
		{"no command or url", `{"upstreams": [{"name": "a"}]}`, "gw.json: upstreams[0]: set command (a stdio server) or url (an HTTP one)"},
		{"command and url", `{"upstreams": [{"name": "a", ` + cmd + `, "url": "http://x"}]}`, "gw.json: upstreams[0]: set command or url, not both"},
		{"url scheme", `{"upstreams": [{"name": "a", "url": "ftp://x"}]}`, `gw.json: upstreams[0].url: "ftp://x" is not an http:// or https:// URL`},
		{"headers on a command", `{"upstreams": [{"name": "a", ` + cmd + `, "headers": {"A": "b"}}]}`, "gw.json: upstreams[0].headers: apply to a url upstream only"},
		{"bad version", `{"upstreams": [{"name": "a", ` + cmd + `, "protocolVersion": "2025-01-01"}]}`, `gw.json: upstreams[0].protocolVersion: "2025-01-01" is not one of`},
		{"bad root", `{"upstreams": [{"name": "a", ` + cmd + `, "roots": ["/data"]}]}`, `gw.json: upstreams[0].roots[0]: "/data" is not a URI`},
		{"negative timeout", `{"upstreams": [{"name": "a", ` + cmd + `, "connectTimeout": "-1s"}]}`, "gw.json: upstreams[0].connectTimeout: must not be negative"},
		{"negative queue timeout", `{"upstreams": [{"name": "a", ` + cmd + `, "queueTimeout": "-1s"}]}`, "gw.json: upstreams[0].queueTimeout: must not be negative"},
		{"negative connections", `{"upstreams": [{"name": "a", ` + cmd + `, "maxConnections": -1}]}`, "gw.json: upstreams[0].maxConnections: must not be negative"},
		{"negative per-client cap", `{"gateway": {"maxInFlightPerClient": -1}, "upstreams": [{"name": "a", ` + cmd + `}]}`, "gw.json: gateway.maxInFlightPerClient: must not be negative"},
		{"health on the MCP path", `{"http": {"addr": ":0", "healthPath": "/mcp"}, "upstreams": [{"name": "a", ` + cmd + `}]}`, `gw.json: http.healthPath: "/mcp" is also the MCP endpoint's path`},
		{"relative path", `{"http": {"path": "mcp"}, "upstreams": [{"name": "a", ` + cmd + `}]}`, `gw.json: http.path: "mcp" does not begin with /`},
		{"no verifier", `{"auth": {"authorizationServers": ["https://as"]}, "upstreams": [{"name": "a", ` + cmd + `}]}`, "gw.json: auth: set exactly one of jwt and introspection"},
		{"no issuer", `{"auth": {"authorizationServers": ["https://as"], "jwt": {}}, "upstreams": [{"name": "a", ` + cmd + `}]}`, "gw.json: auth.jwt.issuer: required"},
		{"HMAC algorithm", `{"auth": {"authorizationServers": ["https://as"], "jwt": {"issuer": "https://as", "algorithms": ["HS256"]}}, "upstreams": [{"name": "a", ` + cmd + `}]}`, `gw.json: auth.jwt.algorithms[0]: "HS256" is not one of`},
		{"no authorization server", `{"auth": {"jwt": {"issuer": "https://as"}}, "upstreams": [{"name": "a", ` + cmd + `}]}`, "gw.json: auth.authorizationServers: at least one issuer is required"},
		{"introspection secret", `{"auth": {"authorizationServers": ["https://as"], "introspection": {"endpoint": "https://as/i", "clientID": "rs"}}, "upstreams": [{"name": "a", ` + cmd + `}]}`, "gw.json: auth.introspection.clientSecretEnv: required"},
		{"bad dpop", `{"auth": {"authorizationServers": ["https://as"], "jwt": {"issuer": "https://as"}, "dpop": "maybe"}, "upstreams": [{"name": "a", ` + cmd + `}]}`, `gw.json: auth.dpop: "maybe" is not off, optional or required`},
		{"rate without interval", `{"rateLimits": {"tool": {"burst": 1}}, "upstreams": [{"name": "a", ` + cmd + `}]}`, "gw.json: rateLimits.tool.every: required"},
		{"rate without burst", `{"rateLimits": {"principal": {"every": "1s"}}, "upstreams": [{"name": "a", ` + cmd + `}]}`, "gw.json: rateLimits.principal.burst: must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseGatewayConfig("gw.json", []byte(tc.json))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant one beginning %q", err, tc.want)
			}
		})
	}
}

// TestGatewayConfigEnv: a header or env value naming an unset variable
// is an error naming the member, not an empty credential.
func TestGatewayConfigEnv(t *testing.T) {
	c, err := parseGatewayConfig("gw.json", []byte(`{"upstreams": [{"name": "a", "url": "http://x", "headers": {"Authorization": "Bearer ${GW_TEST_UNSET}"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.plan("gw.json", io.Discard)
	if err == nil || err.Error() != "gw.json: upstreams[0].headers.Authorization: $GW_TEST_UNSET is not set in the environment" {
		t.Fatalf("unset variable: %v", err)
	}
	var ce *configError
	if !errors.As(err, &ce) {
		t.Fatalf("%T is not a configError", err)
	}
}

// TestGatewayFlags: the flags make the one-upstream configuration and
// override a file of one upstream; a file and an upstream of the flags
// exclude each other.
func TestGatewayFlags(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	two := filepath.Join(dir, "two.json")
	os.WriteFile(one, []byte(`{"http": {"addr": "127.0.0.1:9"}, "upstreams": [{"name": "a", "url": "http://up/mcp", "prefix": "x"}]}`), 0o600)
	os.WriteFile(two, []byte(`{"upstreams": [{"name": "a", "command": ["a"]}, {"name": "b", "command": ["b"]}]}`), 0o600)
	parse := func(args ...string) (*gatewayConfig, error) {
		fs := newGatewayFlagSet()
		pos, command, err := parseInterspersed(fs.fs, args)
		if err != nil {
			return nil, err
		}
		if len(pos) > 0 {
			t.Fatalf("positional %q", pos)
		}
		set := map[string]bool{}
		fs.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		c, _, err := gatewayConfigOf(&fs.f, set, command)
		return c, err
	}
	c, err := parse("--prefix", "fs", "--era", "legacy", "--root", "file:///data", "--", "npx", "srv", "/data")
	if err != nil {
		t.Fatal(err)
	}
	u := c.Upstreams[0]
	if !c.Stdio || c.HTTP != nil || u.Name != "fs" || u.Prefix != "fs" || u.ProtocolVersion != mcp.LatestLegacy ||
		!reflect.DeepEqual(u.Command, []string{"npx", "srv", "/data"}) || !reflect.DeepEqual(u.Roots, []string{"file:///data"}) {
		t.Errorf("one command upstream: %+v %+v", c, u)
	}
	c, err = parse("--http", "127.0.0.1:0", "--url", "http://up/mcp", "--header", "Authorization: Bearer t", "--era", "modern")
	if err != nil {
		t.Fatal(err)
	}
	u = c.Upstreams[0]
	if c.Stdio || c.HTTP.Addr != "127.0.0.1:0" || u.Name != "upstream" || u.URL != "http://up/mcp" ||
		u.Headers["Authorization"] != "Bearer t" || u.ProtocolVersion != mcp.Version20260728 {
		t.Errorf("one url upstream: %+v %+v", c, u)
	}
	c, err = parse("--config", one, "--prefix", "y", "--http", "127.0.0.1:0", "--stdio")
	if err != nil {
		t.Fatal(err)
	}
	if u := c.Upstreams[0]; u.Prefix != "y" || u.URL != "http://up/mcp" || c.HTTP.Addr != "127.0.0.1:0" || !c.Stdio {
		t.Errorf("flags over a file: %+v %+v", c, u)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", one, "--", "srv"}, "--config names the upstreams"},
		{[]string{"--config", one, "--url", "http://x"}, "--config names the upstreams"},
		{[]string{"--config", two, "--prefix", "p"}, "--prefix, --era, --header and --root apply to one upstream; " + two + " has 2"},
		{[]string{"--prefix", "p"}, "give the upstream"},
		{[]string{"--url", "http://x", "--", "srv"}, "give the upstream"},
		{[]string{"--era", "new", "--", "srv"}, `--era must be auto, legacy or modern, not "new"`},
		{[]string{"--header", "nocolon", "--url", "http://x"}, `--header "nocolon" is not K:V`},
		{[]string{"--header", "A: b", "--", "srv"}, "the command line: upstreams[0].headers: apply to a url upstream only"},
		{[]string{"--addr-file", "f", "--", "srv"}, "--addr-file applies to --http"},
		{[]string{"--config", filepath.Join(dir, "none.json")}, filepath.Join(dir, "none.json") + ": open"},
	} {
		_, err := parse(tc.args...)
		var ee *exitError
		if err == nil || !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

func TestExpandEnv(t *testing.T) {
	t.Setenv("GW_TEST_A", "a")
	for in, want := range map[string]string{"x": "x", "$GW_TEST_A-${GW_TEST_A}": "a-a", "$$1": "$1", "": ""} {
		if got, err := expandEnv(in); err != nil || got != want {
			t.Errorf("expandEnv(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := expandEnv("$GW_TEST_UNSET_1 ${GW_TEST_UNSET_2}"); err == nil || err.Error() != "$GW_TEST_UNSET_1, $GW_TEST_UNSET_2 is not set in the environment" {
		t.Errorf("unset: %v", err)
	}
}

// TestLineWriter: an upstream's standard error reaches the gateway's a
// whole line at a time, prefixed; a partial line waits; a line past the
// cap is cut.
func TestLineWriter(t *testing.T) {
	var out bytes.Buffer
	w := &lineWriter{prefix: "[fs] ", out: &out}
	w.Write([]byte("one\ntw"))
	if out.String() != "[fs] one\n" {
		t.Fatalf("after a line and a half: %q", out.String())
	}
	w.Write([]byte("o\nthree\n"))
	if out.String() != "[fs] one\n[fs] two\n[fs] three\n" {
		t.Fatalf("after the rest: %q", out.String())
	}
	out.Reset()
	long := strings.Repeat("x", maxStderrLine+10)
	if n, err := w.Write([]byte(long)); n != len(long) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if want := "[fs] " + long[:maxStderrLine] + "\n"; out.String() != want {
		t.Fatalf("a long line: %d bytes written, want %d", out.Len(), len(want))
	}
	if len(w.buf) != 10 {
		t.Fatalf("%d bytes kept, want 10", len(w.buf))
	}
}

// TestGatewayGuideConfig: the complete file of docs/guide/gateway.md is
// a valid configuration, so the guide cannot drift from the parser.
func TestGatewayGuideConfig(t *testing.T) {
	t.Setenv("SEARCH_TOKEN", "t")
	t.Setenv("GATEWAY_STATE_KEYS", strings.Repeat("0f", 32))
	if found := planGuideConfigs(t, func(body string) bool {
		return strings.Contains(body, `"upstreams"`) && strings.Contains(body, `"rateLimits"`)
	}); found != 1 {
		t.Fatalf("%d complete configuration files in the guide, want 1", found)
	}
}

// planGuideConfigs parses and plans every JSON block of
// docs/guide/gateway.md that match selects, and returns how many it did.
func planGuideConfigs(t *testing.T, match func(body string) bool) (found int) {
	t.Helper()
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "guide", "gateway.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(md), "```json\n")[1:] {
		body, _, _ := strings.Cut(block, "```")
		if !match(body) {
			continue
		}
		found++
		c, err := parseGatewayConfig("gateway.md", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.plan("gateway.md", io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	return found
}

// TestGatewayStateKeys: the sealing keys come from the environment; a
// missing or malformed one is an error naming the member, never the key.
func TestGatewayStateKeys(t *testing.T) {
	c, err := parseGatewayConfig("gw.json", []byte(`{"server": {"requestStateKeysEnv": "GW_TEST_KEYS"}, "upstreams": [{"name": "a", "command": ["x"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.plan("gw.json", io.Discard); err == nil || err.Error() != "gw.json: server.requestStateKeysEnv: $GW_TEST_KEYS is not set in the environment" {
		t.Errorf("unset: %v", err)
	}
	t.Setenv("GW_TEST_KEYS", strings.Repeat("ab", 32)+" not-a-key-secret")
	_, err = c.plan("gw.json", io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "gw.json: server.requestStateKeysEnv: key 2 of $GW_TEST_KEYS") || strings.Contains(err.Error(), "secret") {
		t.Errorf("malformed: %v", err)
	}
}

func TestHealthStatus(t *testing.T) {
	ready := gateway.Health{Name: "a", State: gateway.StateReady}
	full := gateway.Health{Name: "b", State: gateway.StateReady, Exhausted: true}
	down := gateway.Health{Name: "c", State: gateway.StateDown}
	for _, c := range []struct {
		ups    []gateway.Health
		status string
		code   int
	}{
		{[]gateway.Health{ready}, "ready", 200},
		{[]gateway.Health{ready, full}, "exhausted", 503},
		{[]gateway.Health{full, down}, "unavailable", 503},
	} {
		if s, code := healthOf(c.ups); s != c.status || code != c.code {
			t.Errorf("%+v: %s %d, want %s %d", c.ups, s, code, c.status, c.code)
		}
	}
}
