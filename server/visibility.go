package server

import (
	"context"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/mcp"
)

// Per-caller visibility (docs/design/visibility.md): Options.Visibility
// hides tools, prompts, resources and resource templates from some
// callers — in lists, in calls (a hidden item is answered exactly as an
// unknown one) and in change notifications.

// Kind is the kind of a registered item.
type Kind uint8

// The kinds of items a visibility filter decides on.
const (
	KindTool Kind = iota + 1
	KindPrompt
	KindResource
	KindResourceTemplate
)

// Item is what a visibility filter decides on.
type Item struct {
	Kind Kind
	// Name is the tool's or prompt's name, the resource's URI or the
	// template's URI template.
	Name string
	// Meta is the item's _meta as registered (nil for an item that was
	// just removed, in a change notification).
	Meta mcp.Meta
}

// Caller is who asks: the principal (WithPrincipal; "" when
// unauthenticated) and, on a legacy session, the session (nil for a
// 2026-07-28 request).
type Caller struct {
	Principal string
	Session   *Session
}

// VisibilityFunc reports whether caller may see item. ctx is the
// request's context (for a change notification on a legacy session: the
// context of the session's latest request, kept without its
// cancellation, or, for a resources/updated to a session that made no
// request on this instance, context.Background() with only the session's
// principal (WithPrincipal); for a subscriptions/listen stream: the
// listen request's),
// so it carries what the request's middleware put there, such as
// auth's token. It runs on every list entry and call: it must be quick
// and must not call the server.
type VisibilityFunc func(ctx context.Context, caller Caller, item Item) bool

// CallerOf returns who makes req, as a VisibilityFunc is told: the
// principal of ctx (or of req's legacy session) and the legacy session.
// ctx is the request's context.
func CallerOf(ctx context.Context, req *Request) Caller { return callerOf(ctx, req) }

// callerOf returns the Caller of a request.
func callerOf(ctx context.Context, req *Request) Caller {
	c := Caller{Principal: principalFrom(ctx)}
	if req != nil {
		c.Session = req.session
		if c.Principal == "" && req.session != nil {
			c.Principal = req.session.principalOf()
		}
	}
	return c
}

// visible reports whether the caller of req may see it.
func (s *Server) visible(ctx context.Context, req *Request, it Item) bool {
	f := s.opts.Visibility
	return f == nil || f(ctx, callerOf(ctx, req), it)
}

func toolItem(e *toolEntry) Item { return Item{Kind: KindTool, Name: e.tool.Name, Meta: e.tool.Meta} }
func promptItem(e *promptEntry) Item {
	return Item{Kind: KindPrompt, Name: e.prompt.Name, Meta: e.prompt.Meta}
}
func resourceItem(e *resourceEntry) Item {
	return Item{Kind: KindResource, Name: e.resource.URI, Meta: e.resource.Meta}
}
func templateItem(e *templateEntry) Item {
	return Item{Kind: KindResourceTemplate, Name: e.template.URITemplate, Meta: e.template.Meta}
}

// keep returns the filter of a list for req's caller (nil: no filter).
func keep[T any](s *Server, ctx context.Context, req *Request, item func(T) Item) func(T) bool {
	f := s.opts.Visibility
	if f == nil {
		return nil
	}
	c := callerOf(ctx, req) // once per list
	return func(e T) bool { return f(ctx, c, item(e)) }
}

// namesPrefix marks the uri of a relayed list change that names the
// items it is about (see announceItems); a change without it names none.
const namesPrefix = "\x00names:"

// announceItems announces a list change about the named items, so that
// each session and listen stream hears of it only if it can see one of
// them (or, without a filter, always).
func (s *Server) announceItems(method string, names ...string) {
	if s.held(method, names) {
		return
	}
	if s.opts.Visibility == nil || len(names) == 0 {
		s.announce(method, "")
		return
	}
	b, err := json.Marshal(names)
	if err != nil {
		s.announce(method, "")
		return
	}
	s.announce(method, namesPrefix+string(b))
}

// changedItems decodes the items a list change names (nil: unknown).
func (s *Server) changedItems(method, uri string) []Item {
	raw, ok := strings.CutPrefix(uri, namesPrefix)
	if !ok {
		return nil
	}
	var names []string
	if json.Unmarshal([]byte(raw), &names) != nil {
		return nil
	}
	items := make([]Item, len(names))
	for i, n := range names {
		items[i] = s.itemNamed(method, n)
	}
	return items
}

// itemNamed is the item a list change names, with its registered _meta
// when it is (still) registered.
func (s *Server) itemNamed(method, name string) Item {
	switch method {
	case mcp.NotificationToolsListChanged:
		if e, ok := s.tools.get(name); ok {
			return toolItem(e)
		}
		return Item{Kind: KindTool, Name: name}
	case mcp.NotificationPromptsListChanged:
		if e, ok := s.prompts.get(name); ok {
			return promptItem(e)
		}
		return Item{Kind: KindPrompt, Name: name}
	}
	if e, ok := s.resources.get(name); ok {
		return resourceItem(e)
	}
	if e, ok := s.templates.get(name); ok {
		return templateItem(e)
	}
	if strings.Contains(name, "{") {
		return Item{Kind: KindResourceTemplate, Name: name}
	}
	return Item{Kind: KindResource, Name: name}
}

// hears reports whether a caller hears of a change: a list change about
// items (nil: unnamed) or a resources/updated of uri. ctx is the context
// to judge with (nil: the session made no request here).
func (s *Server) hears(ctx context.Context, c Caller, method, uri string, items []Item) bool {
	f := s.opts.Visibility
	if f == nil {
		return true
	}
	if method == mcp.NotificationResourcesUpdated {
		if ctx == nil {
			// A session that has made no request this instance saw (its GET
			// stream is held here, its POSTs served elsewhere): the update
			// names its URI, so it is judged with what is known, the
			// principal. A filter that needs more (auth's token) refuses:
			// it fails closed.
			ctx = WithPrincipal(context.Background(), c.Principal)
		}
		return s.seesURI(uri, func(it Item) bool { return f(ctx, c, it) })
	}
	if ctx == nil || items == nil {
		// A list change that names nothing, or one for a session that has
		// made no request this instance saw: the notification itself
		// names nothing, so it is sent.
		return true
	}
	for _, it := range items {
		if f(ctx, c, it) {
			return true
		}
	}
	return false
}

// seesURI reports whether a caller who sees the items see accepts hears
// of an update of uri: whether what serves it to them (serving: hidden
// resources and templates are passed over as unknown ones) exists, or,
// when nothing registered matches uri, whether see accepts it as a bare
// resource.
func (s *Server) seesURI(uri string, see func(Item) bool) bool {
	r, t, _, matched := s.serving(uri, see)
	if !matched {
		return see(Item{Kind: KindResource, Name: uri})
	}
	return r != nil || t != nil
}

// viewContext is the context a visibility filter sees for the session's
// change notifications: its latest request's, without cancellation (nil
// before any).
func (ss *Session) viewContext() context.Context {
	if p := ss.view.Load(); p != nil {
		return *p
	}
	return nil
}

// noteView records the context of a request of the session, when a
// visibility filter will need it.
func (ss *Session) noteView(ctx context.Context) {
	if ss.srv.opts.Visibility != nil {
		v := context.WithoutCancel(ctx)
		ss.view.Store(&v)
	}
}

// Visible reports whether the caller of req may see item, as
// Options.Visibility decides (true without a filter). Extensions that
// serve lists of their own (ext/skills) filter them with it, as the
// server filters its tools, prompts and resources.
func (s *Server) Visible(ctx context.Context, req *Request, item Item) bool {
	return s.visible(ctx, req, item)
}
