package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/ratelimit"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// gatewayFlags are the flags of "mcpkit gateway".
type gatewayFlags struct {
	config   string
	http     string
	stdio    bool
	addrFile string
	url      string
	prefix   string
	era      string
	headers  multiFlag
	roots    multiFlag
}

// gatewayFlagSet is the flag set of "mcpkit gateway" and its values.
type gatewayFlagSet struct {
	fs *flag.FlagSet
	f  gatewayFlags
}

func newGatewayFlagSet() *gatewayFlagSet {
	g := &gatewayFlagSet{fs: flag.NewFlagSet("mcpkit gateway", flag.ContinueOnError)}
	fs, f := g.fs, &g.f
	fs.StringVar(&f.config, "config", "", "read upstreams, listeners, auth and limits from the JSON `FILE`")
	fs.StringVar(&f.http, "http", "", "serve Streamable HTTP at `ADDR` (endpoint /mcp, health /healthz)")
	fs.BoolVar(&f.stdio, "stdio", false, "serve over stdin/stdout (the default without --http)")
	fs.StringVar(&f.addrFile, "addr-file", "", "with --http, write the address bound to `FILE` (for a port 0)")
	fs.StringVar(&f.url, "url", "", "the upstream: a Streamable HTTP or 2024-11-05 HTTP+SSE endpoint `URL`")
	fs.StringVar(&f.prefix, "prefix", "", "serve the upstream's tools and prompts as `P`_name, its resources as P+uri")
	fs.StringVar(&f.era, "era", "auto", "the upstream's protocol era: auto, legacy or modern")
	fs.Var(&f.headers, "header", "HTTP header `K: V` sent to a --url upstream (repeatable)")
	fs.Var(&f.roots, "root", "a root `URI` declared to the upstream (repeatable)")
	return g
}

func runGateway(ctx context.Context, args []string, stderr io.Writer) error {
	g := newGatewayFlagSet()
	fs, f := g.fs, &g.f
	fs.SetOutput(stderr)
	pos, command, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr("gateway takes no arguments (the upstream command goes after --)")
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	cfg, source, err := gatewayConfigOf(f, set, command)
	if err != nil {
		return err
	}
	out := &lockedWriter{w: stderr}
	plan, err := cfg.plan(source, out)
	if err != nil {
		return usageErr("%v", err)
	}
	plan.addrFile = f.addrFile
	return serveGateway(ctx, plan, out)
}

// gatewayConfigOf builds the configuration from the file, if any, and
// the flags, which override it; source names where it came from, for
// errors.
func gatewayConfigOf(f *gatewayFlags, set map[string]bool, command []string) (*gatewayConfig, string, error) {
	var cfg *gatewayConfig
	source := "the command line"
	if f.config != "" {
		if command != nil || f.url != "" {
			return nil, "", usageErr("--config names the upstreams: give no --url and no command after --")
		}
		var err error
		if cfg, err = loadGatewayConfig(f.config); err != nil {
			return nil, "", usageErr("%v", err)
		}
		source = f.config
	} else {
		if (command == nil) == (f.url == "") {
			return nil, "", usageErr("give the upstream: a command after --, --url URL, or --config FILE")
		}
		name := "upstream"
		if f.prefix != "" {
			name = f.prefix
		}
		cfg = &gatewayConfig{Upstreams: []upstreamConfig{{Name: name, Command: command, URL: f.url}}}
	}
	if set["prefix"] || set["era"] || set["header"] || set["root"] {
		if len(cfg.Upstreams) != 1 {
			return nil, "", usageErr("--prefix, --era, --header and --root apply to one upstream; %s has %d", source, len(cfg.Upstreams))
		}
		u := &cfg.Upstreams[0]
		if set["prefix"] {
			u.Prefix = f.prefix
		}
		if set["era"] {
			switch f.era {
			case "auto":
				u.ProtocolVersion = ""
			case "legacy":
				u.ProtocolVersion = mcp.LatestLegacy
			case "modern":
				u.ProtocolVersion = mcp.Version20260728
			default:
				return nil, "", usageErr("--era must be auto, legacy or modern, not %q", f.era)
			}
		}
		if set["header"] {
			u.Headers = map[string]string{}
			for _, kv := range f.headers {
				k, v, ok := strings.Cut(kv, ":")
				if !ok || strings.TrimSpace(k) == "" {
					return nil, "", usageErr("--header %q is not K:V", kv)
				}
				u.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		if set["root"] {
			u.Roots = slices.Clone(f.roots)
		}
	}
	if f.http != "" {
		if cfg.HTTP == nil {
			cfg.HTTP = &httpConfig{}
		}
		cfg.HTTP.Addr = f.http
	}
	if f.stdio {
		cfg.Stdio = true
	}
	if f.addrFile != "" && (cfg.HTTP == nil || cfg.HTTP.Addr == "") {
		return nil, "", usageErr("--addr-file applies to --http (or http.addr) only")
	}
	if cfg.HTTP == nil || cfg.HTTP.Addr == "" {
		cfg.Stdio = true // the default carrier
	}
	if err := cfg.check(); err != nil {
		var ce *configError
		if errors.As(err, &ce) {
			ce.file = source
		}
		return nil, "", usageErr("%v", err)
	}
	return cfg, source, nil
}

// gatewayPlan is a checked configuration turned into the options of the
// packages that serve it.
type gatewayPlan struct {
	opts       gateway.Options
	http       *streamhttp.Options // nil: no HTTP listener
	addr       string
	path       string
	healthPath string // "": none
	addrFile   string
	stdio      bool
	shutdown   time.Duration
	auth       *authFileConfig
	authOpts   auth.Options // without Resource, known once listening
	log        *slog.Logger
	// callerTokens: an upstream acts with its callers' identity, so the
	// callers' tokens are kept (gateway.CallerTokens, outside auth).
	callerTokens bool
}

// plan turns c, read from source, into the options of gateway,
// streamhttp, auth and ratelimit. Upstream commands' standard error and
// the log go to out.
func (c *gatewayConfig) plan(source string, out io.Writer) (*gatewayPlan, error) {
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	p := &gatewayPlan{stdio: c.Stdio, shutdown: defaultGatewayShutdown, log: log, auth: c.Auth}
	so := &server.Options{
		Instructions: c.Server.Instructions,
		Logger:       slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if c.Server.Name != "" {
		so.Info = mcp.Implementation{Name: c.Server.Name, Title: c.Server.Title, Version: c.Server.Version}
		if so.Info.Version == "" {
			so.Info.Version = "0.1.0"
		}
	}
	keys, err := c.Server.requestStateKeys()
	if err != nil {
		var ce *configError
		if errors.As(err, &ce) {
			ce.file = source
		}
		return nil, err
	}
	so.RequestStateKeys = keys
	if a := c.Auth; a != nil {
		p.authOpts = auth.Options{Scopes: a.Scopes, MethodScopes: a.MethodScopes, ToolScopes: a.ToolScopes, Logger: log}
		if a.Visibility {
			so.Visibility = auth.Visibility(&p.authOpts)
		}
	}
	if r := c.RateLimits; r != nil {
		so.Interceptors = append(so.Interceptors, ratelimit.Interceptor(ratelimit.Options{
			Principal: r.Principal.rate(), Session: r.Session.rate(), Tool: r.Tool.rate(), Logger: log,
		}))
	}
	p.opts = gateway.Options{
		Server:       so,
		InputTimeout: time.Duration(c.Gateway.InputTimeout),
		MaxPending:   c.Gateway.MaxPending,
		// Per-client limits: the principal, else the legacy session,
		// else (ClientAddressKeys, in mux) the remote address.
		MaxPendingPerClient:  c.Gateway.MaxPendingPerClient,
		MaxInFlightPerClient: c.Gateway.MaxInFlightPerClient,
		RestartMin:           time.Duration(c.Gateway.RestartMin),
		RestartMax:           time.Duration(c.Gateway.RestartMax),
		Logger:               log,
	}
	for i := range c.Upstreams {
		u, err := c.Upstreams[i].upstream(fmt.Sprintf("upstreams[%d]", i), out)
		if err != nil {
			var ce *configError
			if errors.As(err, &ce) {
				ce.file = source
			}
			return nil, err
		}
		p.opts.Upstreams = append(p.opts.Upstreams, u)
		p.callerTokens = p.callerTokens || c.Upstreams[i].Identity.usesCaller()
	}
	c.Gateway.identityLimits(&p.opts)
	if h := c.HTTP; h != nil && h.Addr != "" {
		p.addr, p.path = h.Addr, h.path()
		if !h.NoHealth {
			p.healthPath = h.healthPath()
		}
		if h.ShutdownTimeout > 0 {
			p.shutdown = time.Duration(h.ShutdownTimeout)
		}
		p.http = &streamhttp.Options{
			AllowedHosts:            h.AllowedHosts,
			AllowedOrigins:          h.AllowedOrigins,
			MaxBodyBytes:            h.MaxBodyBytes,
			BodyReadTimeout:         time.Duration(h.BodyReadTimeout),
			SessionTTL:              time.Duration(h.SessionTTL),
			MaxSessions:             h.MaxSessions,
			MaxSessionsPerPrincipal: h.MaxSessionsPerPrincipal,
			Stateless:               h.Stateless,
			LegacySSE:               !h.NoLegacySSE,
		}
		p.authOpts.MaxBodyBytes = h.MaxBodyBytes
		p.authOpts.BodyReadTimeout = time.Duration(h.BodyReadTimeout)
	}
	return p, nil
}

// upstream converts one upstream; at is its place in the file.
func (u *upstreamConfig) upstream(at string, out io.Writer) (gateway.Upstream, error) {
	g := gateway.Upstream{
		Name:            u.Name,
		Prefix:          u.Prefix,
		Command:         u.Command,
		Dir:             u.Dir,
		URL:             u.URL,
		ProtocolVersion: u.ProtocolVersion,
		CallTimeout:     time.Duration(u.CallTimeout),
		MaxInFlight:     u.MaxInFlight,
		MaxConnections:  u.MaxConnections,
		QueueTimeout:    time.Duration(u.QueueTimeout),
		ConnectTimeout:  time.Duration(u.ConnectTimeout),
		HealthInterval:  time.Duration(u.HealthInterval),
	}
	if len(u.Command) > 0 {
		g.Stderr = &lineWriter{prefix: "[" + u.Name + "] ", out: out}
	}
	for _, k := range slices.Sorted(maps.Keys(u.Env)) {
		v, err := expandEnv(u.Env[k])
		if err != nil {
			return g, fieldErr(at+".env."+k, "%v", err)
		}
		g.Env = append(g.Env, k+"="+v)
	}
	if len(u.Headers) > 0 {
		g.Header = http.Header{}
		for _, k := range slices.Sorted(maps.Keys(u.Headers)) {
			v, err := expandEnv(u.Headers[k])
			if err != nil {
				return g, fieldErr(at+".headers."+k, "%v", err)
			}
			g.Header.Set(k, v)
		}
	}
	for _, r := range u.Roots {
		g.Roots = append(g.Roots, mcp.Root{URI: r})
	}
	if u.Identity != nil {
		id, err := u.Identity.identity(at)
		if err != nil {
			return g, err
		}
		g.Identity = id
	}
	return g, nil
}

// expandEnv replaces $NAME and ${NAME} in s with the environment's
// values ($$ is a literal $); a variable that is not set is an error, so
// that a missing credential is not sent as an empty one.
func expandEnv(s string) (string, error) {
	var missing []string
	v := os.Expand(s, func(name string) string {
		if name == "$" {
			return "$"
		}
		val, ok := os.LookupEnv(name)
		if !ok {
			missing = append(missing, "$"+name)
		}
		return val
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("%s is not set in the environment", strings.Join(missing, ", "))
	}
	return v, nil
}

// serveGateway connects the upstreams and serves the gateway on the
// planned carriers until ctx ends (SIGINT, SIGTERM) or stdio's input
// does; then it shuts HTTP down within p.shutdown and closes the
// upstreams.
func serveGateway(ctx context.Context, p *gatewayPlan, out io.Writer) error {
	var ln net.Listener
	if p.http != nil {
		var err error
		if ln, err = net.Listen("tcp", p.addr); err != nil {
			return &exitError{code: exitConn, err: err}
		}
		defer ln.Close()
	}
	g, err := gateway.New(&p.opts)
	if err != nil {
		return usageErr("%v", err)
	}
	defer g.Close()
	var mux *http.ServeMux
	var h *streamhttp.Handler
	var origin string
	if ln != nil {
		origin = "http://" + ln.Addr().String()
		if ta, ok := ln.Addr().(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
			origin = fmt.Sprintf("http://127.0.0.1:%d", ta.Port)
		}
		h = streamhttp.NewHandler(g.Server(), p.http)
		if mux, err = p.mux(g, h, ln.Addr(), origin); err != nil {
			h.Close()
			return usageErr("%v", err)
		}
	}
	fmt.Fprintf(out, "mcpkit: gateway: connecting to %d upstream(s)\n", len(p.opts.Upstreams))
	if err := g.Start(ctx); err != nil {
		if h != nil {
			h.Close()
		}
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	for _, st := range g.Health() {
		if st.State != gateway.StateReady {
			fmt.Fprintf(out, "mcpkit: gateway: upstream %s is %s (%s); retrying in the background\n", st.Name, st.State, st.Err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	httpDone := make(chan error, 1)
	var srv *http.Server
	if ln != nil {
		if p.addrFile != "" {
			if err := os.WriteFile(p.addrFile, []byte(ln.Addr().String()), 0o644); err != nil {
				h.Close()
				return err
			}
		}
		srv = newHTTPServer(mux)
		health := ""
		if p.healthPath != "" {
			health = fmt.Sprintf(", health %s%s", origin, p.healthPath)
		}
		fmt.Fprintf(out, "mcpkit: gateway serving MCP on %s%s%s (Ctrl-C to stop)\n", origin, p.path, health)
		for _, line := range accessLines(ln.Addr(), p.http.AllowedHosts, p.http.AllowedOrigins) {
			fmt.Fprintln(out, line)
		}
		go func() { httpDone <- srv.Serve(ln) }()
	}
	var stdioDone chan error // nil without stdio
	if p.stdio {
		stdioDone = make(chan error, 1)
		go func() { stdioDone <- g.Server().Serve(ctx, stdio.New(nil)) }()
	}
	var result error
	select {
	case <-ctx.Done():
	case err := <-httpDone:
		result = &exitError{code: exitConn, err: err}
		srv = nil
	case err := <-stdioDone:
		if err != nil && ctx.Err() == nil {
			result = err
		}
		stdioDone = nil
	}
	cancel()
	fmt.Fprintln(out, "mcpkit: gateway shutting down")
	sctx, stop := context.WithTimeout(context.Background(), p.shutdown)
	defer stop()
	if h != nil {
		if err := h.Shutdown(sctx); err != nil {
			fmt.Fprintln(out, "mcpkit: gateway: some HTTP requests did not end in time")
		}
	}
	if srv != nil {
		if err := srv.Shutdown(sctx); err != nil {
			srv.Close()
		}
		if err := <-httpDone; err != nil && !errors.Is(err, http.ErrServerClosed) && result == nil {
			result = err
		}
	}
	if stdioDone != nil {
		select {
		case <-stdioDone:
		case <-sctx.Done(): // a read of stdin that does not end; the process exits anyway
		}
	}
	g.Close()
	return result
}

// mux routes the MCP endpoint (behind auth when configured), the
// protected resource metadata and the health endpoint.
func (p *gatewayPlan) mux(g *gateway.Gateway, h http.Handler, addr net.Addr, origin string) (*http.ServeMux, error) {
	mux := http.NewServeMux()
	if p.healthPath != "" {
		mux.Handle(p.healthPath, healthHandler(g))
	}
	// Anonymous stateless clients are counted apart by address for the
	// gateway's per-client limits.
	h = gateway.ClientAddressKeys(h)
	if p.auth == nil {
		mux.Handle(p.path, h)
		return mux, nil
	}
	a := p.auth
	o := p.authOpts
	o.Resource = a.Resource
	if o.Resource == "" {
		if ta, ok := addr.(*net.TCPAddr); !ok || !(ta.IP.IsLoopback() || ta.IP.IsUnspecified()) {
			return nil, errors.New("auth.resource: required when the gateway listens beyond loopback (the URL clients use)")
		}
		o.Resource = origin + p.path
	}
	v, err := a.verifier(o.Resource)
	if err != nil {
		return nil, err
	}
	meta := auth.ProtectedResourceMetadata{
		Resource:              o.Resource,
		AuthorizationServers:  a.AuthorizationServers,
		ScopesSupported:       a.ScopesSupported,
		ResourceName:          a.ResourceName,
		ResourceDocumentation: a.ResourceDocumentation,
	}
	if a.DPoP == dpopOptional || a.DPoP == dpopRequired {
		// Stateless server nonces under a key of this process; proofs
		// are remembered in memory against replay.
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		if o.DPoP, err = auth.NewDPoPVerifier(&auth.DPoPOptions{Required: a.DPoP == dpopRequired, NonceKey: key}); err != nil {
			return nil, err
		}
		meta.DPoPSigningAlgValuesSupported = strings.Fields(o.DPoP.Algorithms())
		meta.DPoPBoundAccessTokensRequired = a.DPoP == dpopRequired
	}
	mw, err := auth.Require(v, &o)
	if err != nil {
		return nil, err
	}
	if err := auth.MountProtectedResource(mux, meta); err != nil {
		return nil, err
	}
	h = mw(h)
	if p.callerTokens {
		h = gateway.CallerTokens(h)
	}
	mux.Handle(p.path, h)
	return mux, nil
}

// verifier is the token verifier of the configuration, for resource.
func (a *authFileConfig) verifier(resource string) (auth.Verifier, error) {
	if j := a.JWT; j != nil {
		o := &auth.JWTOptions{Issuer: j.Issuer, Audience: j.Audience, JWKSURL: j.JWKSURL}
		if o.Audience == "" {
			o.Audience = resource
		}
		for _, alg := range j.Algorithms {
			o.Algorithms = append(o.Algorithms, jose.SignatureAlgorithm(alg))
		}
		return auth.NewJWTVerifier(o)
	}
	in := a.Introspection
	o := &auth.IntrospectionOptions{Endpoint: in.Endpoint, Issuer: in.Issuer, Audience: in.Audience,
		AuthMethod: in.AuthMethod, ClientID: in.ClientID, CacheTTL: time.Duration(in.CacheTTL)}
	if o.Audience == "" {
		o.Audience = resource
	}
	secret := func(field, name string) (string, error) {
		v, ok := os.LookupEnv(name)
		if !ok || v == "" {
			return "", fmt.Errorf("auth.introspection.%s: $%s is not set in the environment", field, name)
		}
		return v, nil
	}
	var err error
	if in.AuthMethod == auth.AuthBearer {
		o.BearerToken, err = secret("bearerTokenEnv", in.BearerTokenEnv)
	} else {
		o.ClientSecret, err = secret("clientSecretEnv", in.ClientSecretEnv)
	}
	if err != nil {
		return nil, err
	}
	return auth.NewIntrospectionVerifier(o)
}

// healthStatus is the body of the health endpoint.
type healthStatus struct {
	// Status is "ready" when every upstream is and can take a call,
	// "exhausted" when every upstream is ready but one has no free slot
	// or connection (Health.Exhausted: new calls to it wait), else
	// "unavailable".
	Status    string           `json:"status"`
	Upstreams []gateway.Health `json:"upstreams"`
}

// healthOf is the status of the health endpoint and its HTTP status:
// "unavailable" (503) when an upstream is not ready, "exhausted" (503)
// when one has no free call slot or connection, else "ready" (200).
func healthOf(ups []gateway.Health) (string, int) {
	status, code := "ready", http.StatusOK
	for _, u := range ups {
		if u.State != gateway.StateReady {
			return "unavailable", http.StatusServiceUnavailable
		}
		if u.Exhausted {
			status, code = "exhausted", http.StatusServiceUnavailable
		}
	}
	return status, code
}

// healthHandler answers GET and HEAD with the gateway's Health: 200 when
// every upstream is ready and none is exhausted, 503 otherwise.
func healthHandler(g *gateway.Gateway) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		st := healthStatus{Upstreams: g.Health()}
		var code int
		st.Status, code = healthOf(st.Upstreams)
		if r.Method == http.MethodHead {
			w.WriteHeader(code)
			return
		}
		writeJSONResponse(w, code, st)
	})
}
