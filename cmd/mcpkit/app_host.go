package main

// The HTTP side of "mcpkit app": two loopback origins. The host origin
// serves the preview page, its script, the MCP Apps SDK's host bundle
// and the bridge's API (tools/call, resources/read, resources/list
// relayed to the server through the mcpkit client). The sandbox origin
// serves only the sandbox proxy page, one URL per opened view, with the
// view's Content Security Policy as its response header: the view is
// loaded into an iframe inside that page (srcdoc), which inherits the
// policy, so the view can reach nothing its _meta.ui.csp does not list.
// See docs/design/apps-host.md.

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Limits of "mcpkit app" (docs/design/hardening.md).
const (
	// appMaxBody bounds the body of a request of the page to the bridge
	// API (a tool call's arguments, a URI): 413 beyond it.
	appMaxBody = 1 << 20
	// appMaxViews bounds the sandbox URLs kept at once (one per opened
	// view); opening more forgets the oldest, whose URL then answers 404.
	appMaxViews = 64
	// appMaxBridge bounds the size of the SDK bundle read from --bridge.
	appMaxBridge = 16 << 20
)

// appSandbox is the sandbox attribute of the view's own iframe, inside
// the proxy: scripts and forms, never allow-same-origin, so that the view
// runs in an opaque origin and reaches neither origin's storage or DOM.
const appSandbox = "allow-scripts allow-forms"

// appProxySandbox is the sandbox attribute of the proxy's iframe in the
// host page: the proxy keeps its own (second, separate) origin.
const appProxySandbox = "allow-scripts allow-same-origin allow-forms"

//go:embed app_assets
var appAssets embed.FS

// appHost serves the page, the bridge API and the sandbox proxy.
type appHost struct {
	c      *client.Client
	bridge []byte // the SDK's host bundle (ES module)
	// hostOrigin and sandboxOrigin are http://127.0.0.1:port of the two
	// listeners; a request whose Host is not its listener's is refused
	// (DNS rebinding), and a POST must come from hostOrigin (CSRF).
	hostOrigin, sandboxOrigin string

	mu    sync.Mutex
	views map[string]appView // sandbox id -> policy
	order []string           // ids, oldest first
	tools map[string]apps.ToolMeta
}

// appView is what the sandbox proxy of one opened view is served with.
type appView struct {
	policy string // Content-Security-Policy header
	allow  string // Permissions Policy of the view's iframe
}

func newAppHost(c *client.Client, bridge []byte, hostOrigin, sandboxOrigin string) *appHost {
	return &appHost{c: c, bridge: bridge, hostOrigin: hostOrigin, sandboxOrigin: sandboxOrigin,
		views: make(map[string]appView), tools: make(map[string]apps.ToolMeta)}
}

// hostPolicy is the Content Security Policy of the host page itself: its
// own scripts and API, frames from the sandbox origin only.
func (h *appHost) hostPolicy() string {
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
		"frame-src " + h.sandboxOrigin + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// viewPolicy builds the Content Security Policy a view runs under from
// its declared CSP (already validated): nothing beyond the sandbox
// origin's own proxy script, inline code, data: images and the origins
// the view lists. With no lists this is the restrictive default of the
// MCP Apps extension: no network access at all.
func viewPolicy(csp *apps.CSP, hostOrigin, sandboxOrigin string) string {
	if csp == nil {
		csp = &apps.CSP{}
	}
	list := func(base string, extra []string) string {
		parts := slices.Clone(extra)
		if base != "" {
			parts = append([]string{base}, parts...)
		}
		if len(parts) == 0 {
			return "'none'"
		}
		return strings.Join(parts, " ")
	}
	res := csp.ResourceDomains
	return strings.Join([]string{
		"default-src 'none'",
		"script-src " + list("'self' 'unsafe-inline'", res),
		"style-src " + list("'self' 'unsafe-inline'", res),
		"img-src " + list("'self' data: blob:", res),
		"font-src " + list("'self' data:", res),
		"media-src " + list("'self' data: blob:", res),
		"connect-src " + list("", csp.ConnectDomains),
		"frame-src " + list("", csp.FrameDomains),
		"base-uri " + list("", csp.BaseURIDomains),
		"object-src 'none'",
		"form-action 'none'",
		"frame-ancestors " + hostOrigin + " " + sandboxOrigin,
	}, "; ")
}

// allowAttribute is the iframe allow attribute (Permissions Policy) that
// grants what the view asked for, and nothing else.
func allowAttribute(p *apps.Permissions) string {
	if p == nil {
		return ""
	}
	var out []string
	for _, f := range []struct {
		on   bool
		name string
	}{{p.Camera, "camera"}, {p.Microphone, "microphone"}, {p.Geolocation, "geolocation"}, {p.ClipboardWrite, "clipboard-write"}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	return strings.Join(out, "; ")
}

// hostHandler serves the host origin.
func (h *appHost) hostHandler() http.Handler {
	mux := http.NewServeMux()
	asset := func(name, ctype string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, err := appAssets.ReadFile("app_assets/" + name)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Content-Security-Policy", h.hostPolicy())
			_, _ = w.Write(b)
		}
	}
	mux.HandleFunc("GET /{$}", asset("index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET /host.js", asset("host.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /host.css", asset("host.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /bridge.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		_, _ = w.Write(h.bridge)
	})
	mux.HandleFunc("GET /api/tools", h.apiTools)
	mux.HandleFunc("POST /api/view", h.apiView)
	mux.HandleFunc("POST /api/call", h.apiCall)
	mux.HandleFunc("POST /api/read", h.apiRead)
	mux.HandleFunc("POST /api/resources", h.apiResources)
	return h.guard(h.hostOrigin, mux)
}

// sandboxHandler serves the sandbox origin: the proxy page of each
// opened view under its policy, and the proxy's script.
func (h *appHost) sandboxHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sandbox/{id}", func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		v, ok := h.views[r.PathValue("id")]
		h.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		page, err := appAssets.ReadFile("app_assets/sandbox.html")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		// The proxy reads the host's origin and the view's grants from
		// its own document; both are ours, escaped for an attribute.
		page = []byte(strings.NewReplacer(
			"{{HOST_ORIGIN}}", attrEscape(h.hostOrigin),
			"{{SANDBOX}}", attrEscape(appSandbox),
			"{{ALLOW}}", attrEscape(v.allow),
		).Replace(string(page)))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", v.policy)
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(page)
	})
	mux.HandleFunc("GET /sandbox.js", func(w http.ResponseWriter, r *http.Request) {
		b, err := appAssets.ReadFile("app_assets/sandbox.js")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		_, _ = w.Write(b)
	})
	return h.guard(h.sandboxOrigin, mux)
}

func attrEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// guard refuses a request whose Host is not the listener's own (a page
// of another site reaching loopback through DNS rebinding) and a POST
// whose Origin is not the host page's (another site's form or fetch).
func (h *appHost) guard(origin string, next http.Handler) http.Handler {
	host := strings.TrimPrefix(origin, "http://")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != host {
			apiError(w, http.StatusForbidden, -32600, fmt.Sprintf("Host %q is not %s", r.Host, host))
			return
		}
		if r.Method != http.MethodGet && r.Header.Get("Origin") != h.hostOrigin {
			apiError(w, http.StatusForbidden, -32600, fmt.Sprintf("Origin %q is not %s", r.Header.Get("Origin"), h.hostOrigin))
			return
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// apiError answers with a JSON-RPC-shaped error object.
func apiError(w http.ResponseWriter, status int, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg}})
	_, _ = w.Write(b)
}

// relayError answers with the server's JSON-RPC error as is, or a 502
// for a failure to reach the server.
func relayError(w http.ResponseWriter, err error) {
	if e, ok := jsonrpc.AsError(err); ok {
		apiError(w, http.StatusBadGateway, e.Code, e.Message)
		return
	}
	apiError(w, http.StatusBadGateway, mcp.CodeInternalError, err.Error())
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		apiError(w, http.StatusInternalServerError, mcp.CodeInternalError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// readBody decodes the JSON body of a page request into v, within
// appMaxBody; false when it answered an error.
func readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, appMaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		apiError(w, http.StatusRequestEntityTooLarge, mcp.CodeInvalidRequest, fmt.Sprintf("the request body exceeds %d bytes", appMaxBody))
		return false
	case err != nil:
		apiError(w, http.StatusBadRequest, mcp.CodeInvalidRequest, err.Error())
		return false
	}
	if len(b) == 0 {
		b = []byte("{}")
	}
	if err := json.Unmarshal(b, v); err != nil {
		apiError(w, http.StatusBadRequest, mcp.CodeInvalidParams, "the request body is not the expected JSON: "+err.Error())
		return false
	}
	return true
}

// appTool is a tool with a view, as the page lists it.
type appTool struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitzero"`
	Description string   `json:"description,omitzero"`
	ResourceURI string   `json:"resourceUri"`
	Visibility  []string `json:"visibility,omitempty"`
}

// loadTools lists the server's tools and remembers the view settings of
// each (the visibility that apiCall enforces).
func (h *appHost) loadTools(ctx context.Context) ([]appTool, map[string]mcp.Tool, error) {
	all := make(map[string]mcp.Tool)
	metas := make(map[string]apps.ToolMeta)
	var withView []appTool
	for t, err := range h.c.Tools(ctx) {
		if err != nil {
			return nil, nil, err
		}
		all[t.Name] = t
		tm, ok := apps.ToolUI(&t)
		metas[t.Name] = tm
		if ok {
			withView = append(withView, appTool{Name: t.Name, Title: t.Title, Description: t.Description,
				ResourceURI: tm.ResourceURI, Visibility: tm.Visibility})
		}
	}
	h.mu.Lock()
	h.tools = metas
	h.mu.Unlock()
	return withView, all, nil
}

func (h *appHost) apiTools(w http.ResponseWriter, r *http.Request) {
	tools, _, err := h.loadTools(r.Context())
	if err != nil {
		relayError(w, err)
		return
	}
	writeJSON(w, map[string]any{"tools": orEmpty(tools)})
}

// apiView fetches the view of a tool, checks its CSP, and registers a
// sandbox URL served under the policy built from it.
func (h *appHost) apiView(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Tool string `json:"tool"`
	}
	if !readBody(w, r, &in) {
		return
	}
	_, all, err := h.loadTools(r.Context())
	if err != nil {
		relayError(w, err)
		return
	}
	t, ok := all[in.Tool]
	if !ok {
		apiError(w, http.StatusNotFound, mcp.CodeInvalidParams, fmt.Sprintf("no tool %q", in.Tool))
		return
	}
	ui, err := apps.FetchUI(r.Context(), h.c, &t)
	switch {
	case errors.Is(err, apps.ErrNoUI):
		apiError(w, http.StatusNotFound, mcp.CodeInvalidParams, err.Error())
		return
	case err != nil:
		relayError(w, err)
		return
	}
	if err := ui.Meta.CSP.Validate(); err != nil {
		// A host builds no policy from a list that could widen it.
		apiError(w, http.StatusUnprocessableEntity, mcp.CodeInvalidParams, fmt.Sprintf("the view %s declares a CSP no host may apply: %v", ui.URI, err))
		return
	}
	v := appView{policy: viewPolicy(ui.Meta.CSP, h.hostOrigin, h.sandboxOrigin), allow: allowAttribute(ui.Meta.Permissions)}
	id := h.register(v)
	writeJSON(w, map[string]any{
		"uri":           ui.URI,
		"html":          ui.HTML,
		"csp":           orZero(ui.Meta.CSP),
		"permissions":   orZero(ui.Meta.Permissions),
		"prefersBorder": ui.Meta.PrefersBorder,
		"sandbox":       h.sandboxOrigin + "/sandbox/" + id,
		"proxySandbox":  appProxySandbox,
		"allow":         v.allow,
		"policy":        v.policy,
	})
}

func orZero[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}

// register keeps v under a fresh random id, forgetting the oldest view
// beyond appMaxViews.
func (h *appHost) register(v appView) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	h.mu.Lock()
	defer h.mu.Unlock()
	h.views[id] = v
	h.order = append(h.order, id)
	for len(h.order) > appMaxViews {
		delete(h.views, h.order[0])
		h.order = h.order[1:]
	}
	return id
}

// apiCall relays a tools/call of the page or of a view. A tool that the
// server marks as visible to the model only (_meta.ui.visibility without
// "app") is refused: views may call only tools meant for apps.
func (h *appHost) apiCall(w http.ResponseWriter, r *http.Request) {
	var p mcp.CallToolParams
	if !readBody(w, r, &p) {
		return
	}
	if p.Name == "" {
		apiError(w, http.StatusBadRequest, mcp.CodeInvalidParams, "tools/call needs a tool name")
		return
	}
	h.mu.Lock()
	tm, known := h.tools[p.Name]
	h.mu.Unlock()
	if !known {
		if _, _, err := h.loadTools(r.Context()); err != nil {
			relayError(w, err)
			return
		}
		h.mu.Lock()
		tm, known = h.tools[p.Name]
		h.mu.Unlock()
	}
	if known && !tm.VisibleTo(apps.VisibleToApp) {
		apiError(w, http.StatusForbidden, mcp.CodeInvalidParams, fmt.Sprintf("the tool %q is not visible to apps (_meta.ui.visibility %v)", p.Name, tm.Visibility))
		return
	}
	res, err := h.c.CallTool(r.Context(), &p)
	if err != nil {
		relayError(w, err)
		return
	}
	writeJSON(w, res)
}

// apiRead relays a resources/read.
func (h *appHost) apiRead(w http.ResponseWriter, r *http.Request) {
	var p mcp.ReadResourceParams
	if !readBody(w, r, &p) {
		return
	}
	res, err := h.c.ReadResource(r.Context(), &p)
	if err != nil {
		relayError(w, err)
		return
	}
	writeJSON(w, res)
}

// apiResources relays one page of resources/list.
func (h *appHost) apiResources(w http.ResponseWriter, r *http.Request) {
	var p mcp.ListResourcesParams
	if !readBody(w, r, &p) {
		return
	}
	res, err := h.c.ListResources(r.Context(), &p)
	if err != nil {
		relayError(w, err)
		return
	}
	writeJSON(w, res)
}
