package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/ratelimit"
	"github.com/mcpkit/mcpkit/server"
)

// The configuration file of "mcpkit gateway --config FILE" is JSON: the
// JSON decoder is already a dependency of the module, so the file costs
// no new one (YAML or TOML would), and JSON's strictness (no implicit
// types) suits a file that names credentials and limits. Unknown members
// are errors, so a misspelt limit is never silently ignored; every error
// names the file and the member (docs/guide/gateway.md).

// Defaults of the configuration that the packages it feeds do not define.
const (
	// defaultGatewayPath is the MCP endpoint's path.
	defaultGatewayPath = "/mcp"
	// defaultHealthPath is the health endpoint's path.
	defaultHealthPath = "/healthz"
	// defaultGatewayShutdown bounds the HTTP shutdown on SIGINT/SIGTERM
	// (sessions ended, connections drained) before the upstreams close.
	defaultGatewayShutdown = 10 * time.Second
	// maxConfigBytes caps the configuration file.
	maxConfigBytes = 1 << 20
)

// gatewayConfig is the configuration file.
type gatewayConfig struct {
	Server     serverConfig     `json:"server"`
	HTTP       *httpConfig      `json:"http"`
	Stdio      bool             `json:"stdio"`
	Gateway    limitsConfig     `json:"gateway"`
	Auth       *authFileConfig  `json:"auth"`
	RateLimits *rateLimitConfig `json:"rateLimits"`
	Upstreams  []upstreamConfig `json:"upstreams"`
}

// serverConfig is the gateway's identity to its clients.
type serverConfig struct {
	Name         string `json:"name"`
	Version      string `json:"version"`
	Title        string `json:"title"`
	Instructions string `json:"instructions"`
	// RequestStateKeysEnv names the environment variable holding the
	// keys that seal requestState (server.ParseRequestStateKey each,
	// separated by commas or spaces; the first seals, all open).
	RequestStateKeysEnv string `json:"requestStateKeysEnv"`
}

// limitsConfig are the gateway's own limits (gateway.Options).
type limitsConfig struct {
	InputTimeout         duration `json:"inputTimeout"`
	MaxPending           int      `json:"maxPending"`
	MaxPendingPerClient  int      `json:"maxPendingPerClient"`
	MaxInFlightPerClient int      `json:"maxInFlightPerClient"`
	RestartMin           duration `json:"restartMin"`
	RestartMax           duration `json:"restartMax"`
	TokenCacheSize       int      `json:"tokenCacheSize"`
	TokenExpiryMargin    duration `json:"tokenExpiryMargin"`
}

// httpConfig is the HTTP listener and the streamhttp.Options that matter.
type httpConfig struct {
	Addr                    string   `json:"addr"`
	Path                    string   `json:"path"`
	HealthPath              string   `json:"healthPath"`
	NoHealth                bool     `json:"noHealth"`
	AllowedHosts            []string `json:"allowedHosts"`
	AllowedOrigins          []string `json:"allowedOrigins"`
	MaxBodyBytes            int64    `json:"maxBodyBytes"`
	BodyReadTimeout         duration `json:"bodyReadTimeout"`
	SessionTTL              duration `json:"sessionTTL"`
	MaxSessions             int      `json:"maxSessions"`
	MaxSessionsPerPrincipal int      `json:"maxSessionsPerPrincipal"`
	Stateless               bool     `json:"stateless"`
	NoLegacySSE             bool     `json:"noLegacySSE"`
	ShutdownTimeout         duration `json:"shutdownTimeout"`
}

// upstreamConfig is one upstream (gateway.Upstream).
type upstreamConfig struct {
	Name            string            `json:"name"`
	Prefix          string            `json:"prefix"`
	Command         []string          `json:"command"`
	Env             map[string]string `json:"env"`
	Dir             string            `json:"dir"`
	URL             string            `json:"url"`
	Headers         map[string]string `json:"headers"`
	ProtocolVersion string            `json:"protocolVersion"`
	Roots           []string          `json:"roots"`
	CallTimeout     duration          `json:"callTimeout"`
	MaxInFlight     int               `json:"maxInFlight"`
	MaxConnections  int               `json:"maxConnections"`
	QueueTimeout    duration          `json:"queueTimeout"`
	ConnectTimeout  duration          `json:"connectTimeout"`
	HealthInterval  duration          `json:"healthInterval"`
	Identity        *identityConfig   `json:"identity"`
}

// authFileConfig is the resource server in front of the HTTP endpoint.
type authFileConfig struct {
	Resource              string              `json:"resource"`
	AuthorizationServers  []string            `json:"authorizationServers"`
	JWT                   *jwtConfig          `json:"jwt"`
	Introspection         *introspectConfig   `json:"introspection"`
	Scopes                []string            `json:"scopes"`
	MethodScopes          map[string][]string `json:"methodScopes"`
	ToolScopes            map[string][]string `json:"toolScopes"`
	ScopesSupported       []string            `json:"scopesSupported"`
	ResourceName          string              `json:"resourceName"`
	ResourceDocumentation string              `json:"resourceDocumentation"`
	Visibility            bool                `json:"visibility"`
	DPoP                  string              `json:"dpop"`
}

type jwtConfig struct {
	Issuer     string   `json:"issuer"`
	Audience   string   `json:"audience"`
	JWKSURL    string   `json:"jwksURL"`
	Algorithms []string `json:"algorithms"`
}

type introspectConfig struct {
	Endpoint        string   `json:"endpoint"`
	Issuer          string   `json:"issuer"`
	Audience        string   `json:"audience"`
	AuthMethod      string   `json:"authMethod"`
	ClientID        string   `json:"clientID"`
	ClientSecretEnv string   `json:"clientSecretEnv"`
	BearerTokenEnv  string   `json:"bearerTokenEnv"`
	CacheTTL        duration `json:"cacheTTL"`
}

// rateLimitConfig is the ratelimit interceptor's buckets.
type rateLimitConfig struct {
	Principal *rateConfig `json:"principal"`
	Session   *rateConfig `json:"session"`
	Tool      *rateConfig `json:"tool"`
}

// rateConfig is a token bucket: one request per Every, Burst at once.
type rateConfig struct {
	Every duration `json:"every"`
	Burst int      `json:"burst"`
}

// duration is a time.Duration written as a Go duration string ("30s").
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`want a duration string such as "30s"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

func (d duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// configError is an error of the configuration file: the file, the
// member (a JSON path such as upstreams[1].callTimeout) and why.
type configError struct {
	file, field string
	err         error
}

func (e *configError) Error() string {
	if e.field == "" {
		return fmt.Sprintf("%s: %v", e.file, e.err)
	}
	return fmt.Sprintf("%s: %s: %v", e.file, e.field, e.err)
}

func (e *configError) Unwrap() error { return e.err }

// loadGatewayConfig reads and checks the configuration file at path.
func loadGatewayConfig(path string) (*gatewayConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &configError{file: path, err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, &configError{file: path, err: err}
	}
	if len(b) > maxConfigBytes {
		return nil, &configError{file: path, err: fmt.Errorf("larger than %d bytes", maxConfigBytes)}
	}
	return parseGatewayConfig(path, b)
}

// parseGatewayConfig decodes data, the contents of file, strictly, and
// checks it.
func parseGatewayConfig(file string, data []byte) (*gatewayConfig, error) {
	var c gatewayConfig
	if err := json.Unmarshal(data, &c, json.RejectUnknownMembers(true)); err != nil {
		return nil, jsonConfigError(file, data, err)
	}
	if err := c.check(); err != nil {
		var ce *configError
		if errors.As(err, &ce) {
			ce.file = file
		}
		return nil, err
	}
	return &c, nil
}

// jsonConfigError names the member or the line of a decoding error.
func jsonConfigError(file string, data []byte, err error) error {
	var se *json.SemanticError
	if errors.As(err, &se) {
		why := se.Err
		switch {
		case errors.Is(why, json.ErrUnknownName):
			why = errors.New("unknown field")
		case why == nil:
			why = fmt.Errorf("want %s, not a JSON %s", goKind(se.GoType.String()), se.JSONKind)
		}
		return &configError{file: file, field: fieldPath(string(se.JSONPointer)), err: why}
	}
	var sy *jsontext.SyntacticError
	if errors.As(err, &sy) {
		line := 1 + strings.Count(string(data[:min(int(sy.ByteOffset), len(data))]), "\n")
		f := fieldPath(string(sy.JSONPointer))
		if f == "" {
			f = fmt.Sprintf("line %d", line)
		} else {
			f = fmt.Sprintf("line %d, %s", line, f)
		}
		return &configError{file: file, field: f, err: sy.Err}
	}
	return &configError{file: file, err: err}
}

// goKind says what a Go type of the configuration is, for an error.
func goKind(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "main."), strings.HasPrefix(t, "*main."):
		return "an object"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	}
	return "a number"
}

// fieldPath turns a JSON pointer (/upstreams/1/callTimeout) into the
// path the errors show (upstreams[1].callTimeout).
func fieldPath(ptr string) string {
	if ptr == "" {
		return ""
	}
	var b strings.Builder
	for i, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		if _, err := strconv.Atoi(tok); err == nil && i > 0 {
			fmt.Fprintf(&b, "[%s]", tok)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func fieldErr(field, format string, args ...any) error {
	return &configError{field: field, err: fmt.Errorf(format, args...)}
}

// check validates what decoding cannot: required members, exclusive
// members, uniqueness, ranges.
func (c *gatewayConfig) check() error {
	if len(c.Upstreams) == 0 {
		return fieldErr("upstreams", "at least one upstream is required")
	}
	names, prefixes := map[string]string{}, map[string]string{}
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		at := fmt.Sprintf("upstreams[%d]", i)
		if u.Name == "" {
			return fieldErr(at+".name", "required")
		}
		if prev, ok := names[u.Name]; ok {
			return fieldErr(at+".name", "%q is also the name of %s", u.Name, prev)
		}
		names[u.Name] = at
		if u.Prefix != "" {
			if prev, ok := prefixes[u.Prefix]; ok {
				return fieldErr(at+".prefix", "%q is also the prefix of %s", u.Prefix, prev)
			}
			prefixes[u.Prefix] = at
		}
		if err := u.check(at); err != nil {
			return err
		}
		if u.Identity != nil {
			if err := u.Identity.check(at, u, c.Auth); err != nil {
				return err
			}
		}
	}
	if c.Gateway.TokenCacheSize < 0 {
		return fieldErr("gateway.tokenCacheSize", "must not be negative")
	}
	if c.Gateway.TokenExpiryMargin < 0 {
		return fieldErr("gateway.tokenExpiryMargin", "must not be negative")
	}
	if h := c.HTTP; h != nil {
		if err := h.check(); err != nil {
			return err
		}
	}
	for f, n := range map[string]int{"gateway.maxPending": c.Gateway.MaxPending,
		"gateway.maxPendingPerClient": c.Gateway.MaxPendingPerClient, "gateway.maxInFlightPerClient": c.Gateway.MaxInFlightPerClient} {
		if n < 0 {
			return fieldErr(f, "must not be negative")
		}
	}
	for f, d := range map[string]duration{"gateway.inputTimeout": c.Gateway.InputTimeout,
		"gateway.restartMin": c.Gateway.RestartMin, "gateway.restartMax": c.Gateway.RestartMax} {
		if d < 0 {
			return fieldErr(f, "must not be negative")
		}
	}
	if a := c.Auth; a != nil {
		if err := a.check(); err != nil {
			return err
		}
	}
	if r := c.RateLimits; r != nil {
		for f, rc := range map[string]*rateConfig{"rateLimits.principal": r.Principal,
			"rateLimits.session": r.Session, "rateLimits.tool": r.Tool} {
			if rc == nil {
				continue
			}
			if rc.Every <= 0 {
				return fieldErr(f+".every", "required: the interval between requests, such as \"1s\"")
			}
			if rc.Burst < 1 {
				return fieldErr(f+".burst", "must be at least 1")
			}
		}
	}
	return nil
}

func (u *upstreamConfig) check(at string) error {
	switch {
	case len(u.Command) == 0 && u.URL == "":
		return fieldErr(at, "set command (a stdio server) or url (an HTTP one)")
	case len(u.Command) > 0 && u.URL != "":
		return fieldErr(at, "set command or url, not both")
	case len(u.Command) > 0 && u.Command[0] == "":
		return fieldErr(at+".command[0]", "the program is empty")
	case u.URL != "" && !strings.HasPrefix(u.URL, "http://") && !strings.HasPrefix(u.URL, "https://"):
		return fieldErr(at+".url", "%q is not an http:// or https:// URL", u.URL)
	case u.URL == "" && len(u.Headers) > 0:
		return fieldErr(at+".headers", "apply to a url upstream only")
	case u.URL != "" && (len(u.Env) > 0 || u.Dir != ""):
		return fieldErr(at, "env and dir apply to a command upstream only")
	case u.ProtocolVersion != "" && !mcp.IsKnown(u.ProtocolVersion):
		return fieldErr(at+".protocolVersion", "%q is not one of %s", u.ProtocolVersion, strings.Join(mcp.Versions(), ", "))
	case u.MaxInFlight < 0:
		return fieldErr(at+".maxInFlight", "must not be negative")
	case u.MaxConnections < 0:
		return fieldErr(at+".maxConnections", "must not be negative")
	}
	for f, d := range map[string]duration{"callTimeout": u.CallTimeout, "connectTimeout": u.ConnectTimeout, "queueTimeout": u.QueueTimeout} {
		if d < 0 {
			return fieldErr(at+"."+f, "must not be negative")
		}
	}
	for k := range u.Headers {
		if k == "" || http.CanonicalHeaderKey(k) == "" || strings.ContainsAny(k, " :\r\n") {
			return fieldErr(at+".headers", "%q is not a header name", k)
		}
	}
	for k := range u.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fieldErr(at+".env", "%q is not a variable name", k)
		}
	}
	for i, r := range u.Roots {
		if !strings.Contains(r, ":") {
			return fieldErr(fmt.Sprintf("%s.roots[%d]", at, i), "%q is not a URI (such as file:///data)", r)
		}
	}
	return nil
}

func (h *httpConfig) check() error {
	path, health := h.path(), h.healthPath()
	switch {
	case !strings.HasPrefix(path, "/"):
		return fieldErr("http.path", "%q does not begin with /", h.Path)
	case !h.NoHealth && !strings.HasPrefix(health, "/"):
		return fieldErr("http.healthPath", "%q does not begin with /", h.HealthPath)
	case !h.NoHealth && health == path:
		return fieldErr("http.healthPath", "%q is also the MCP endpoint's path", health)
	case strings.HasPrefix(path, auth.WellKnownPath) || (!h.NoHealth && strings.HasPrefix(health, auth.WellKnownPath)):
		return fieldErr("http", "paths under %s are reserved for the protected resource metadata", auth.WellKnownPath)
	case strings.ContainsAny(path+health, "{} \t"):
		return fieldErr("http", "paths may not contain braces or spaces")
	case h.MaxBodyBytes < 0:
		return fieldErr("http.maxBodyBytes", "must not be negative")
	}
	return nil
}

func (h *httpConfig) path() string {
	if h == nil || h.Path == "" {
		return defaultGatewayPath
	}
	return h.Path
}

func (h *httpConfig) healthPath() string {
	if h == nil || h.HealthPath == "" {
		return defaultHealthPath
	}
	return h.HealthPath
}

func (a *authFileConfig) check() error {
	switch {
	case (a.JWT == nil) == (a.Introspection == nil):
		return fieldErr("auth", "set exactly one of jwt and introspection")
	case len(a.AuthorizationServers) == 0:
		return fieldErr("auth.authorizationServers", "at least one issuer is required (clients find it in the protected resource metadata)")
	}
	switch a.DPoP {
	case "", dpopOff, dpopOptional, dpopRequired:
	default:
		return fieldErr("auth.dpop", "%q is not %s, %s or %s", a.DPoP, dpopOff, dpopOptional, dpopRequired)
	}
	if j := a.JWT; j != nil {
		if j.Issuer == "" {
			return fieldErr("auth.jwt.issuer", "required")
		}
		for i, alg := range j.Algorithms {
			if !slices.Contains(jwtAlgorithms, jose.SignatureAlgorithm(alg)) {
				return fieldErr(fmt.Sprintf("auth.jwt.algorithms[%d]", i), "%q is not one of %v", alg, jwtAlgorithms)
			}
		}
	}
	if in := a.Introspection; in != nil {
		if in.Endpoint == "" {
			return fieldErr("auth.introspection.endpoint", "required")
		}
		switch in.AuthMethod {
		case "", auth.AuthClientSecretBasic, auth.AuthClientSecretPost:
			if in.ClientID == "" {
				return fieldErr("auth.introspection.clientID", "required")
			}
			if in.ClientSecretEnv == "" {
				return fieldErr("auth.introspection.clientSecretEnv", "required: the environment variable holding the secret")
			}
		case auth.AuthBearer:
			if in.BearerTokenEnv == "" {
				return fieldErr("auth.introspection.bearerTokenEnv", "required: the environment variable holding the token")
			}
		default:
			return fieldErr("auth.introspection.authMethod", "%q is not %s, %s or %s", in.AuthMethod,
				auth.AuthClientSecretBasic, auth.AuthClientSecretPost, auth.AuthBearer)
		}
	}
	return nil
}

// jwtAlgorithms are the signature algorithms a configuration may list
// (asymmetric only: a shared HMAC key has no place in a file).
var jwtAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// rate converts a configured bucket (nil: no limit).
func (r *rateConfig) rate() ratelimit.Rate {
	if r == nil {
		return ratelimit.Rate{}
	}
	return ratelimit.Every(time.Duration(r.Every), r.Burst)
}

// requestStateKeys reads the keys named by RequestStateKeysEnv (none
// when it is empty).
func (c *serverConfig) requestStateKeys() ([]server.RequestStateKey, error) {
	if c.RequestStateKeysEnv == "" {
		return nil, nil
	}
	v, ok := os.LookupEnv(c.RequestStateKeysEnv)
	if !ok || strings.TrimSpace(v) == "" {
		return nil, fieldErr("server.requestStateKeysEnv", "$%s is not set in the environment", c.RequestStateKeysEnv)
	}
	var keys []server.RequestStateKey
	for i, s := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		k, err := server.ParseRequestStateKey(s)
		if err != nil {
			// The key itself stays out of the message.
			return nil, fieldErr("server.requestStateKeysEnv", "key %d of $%s: want 64 hexadecimal digits or the base64 of 32 bytes", i+1, c.RequestStateKeysEnv)
		}
		keys = append(keys, k)
	}
	return keys, nil
}
