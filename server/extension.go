package server

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsontok"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
)

// Extensions (SEP-2133): identifiers the server advertises in
// capabilities.extensions, and the custom requests and notifications an
// extension defines. See docs/design/extensions.md.

// MethodHandler answers one extension request: params arrive decoded
// into In (unknown members ignored, _meta available through the
// Request), and Out, which must encode as a JSON object, is the result.
// A returned *jsonrpc.Error is sent as it is; any other error is -32603.
type MethodHandler[In, Out any] func(ctx context.Context, req *Request, in In) (Out, error)

// NotificationHandler handles one extension notification from the
// client, with params decoded into In. It runs on the session's reader,
// in arrival order: it must not block for long.
type NotificationHandler[In any] func(ctx context.Context, n *Notification, in In)

// Notification is an extension notification as its handler sees it.
type Notification struct {
	// Method is the notification's method.
	Method string
	// Session is the legacy session it arrived on; nil for a 2026-07-28
	// notification, which belongs to no session.
	Session *Session
	// Meta is params._meta (nil when absent).
	Meta mcp.Meta
}

type extMethod struct {
	handle func(ctx context.Context, req *Request, raw jsontext.Value) (any, error)
}

type extNotification struct {
	handle func(ctx context.Context, n *Notification, raw jsontext.Value)
}

// AddExtension advertises extension id in capabilities.extensions, in
// initialize results and server/discover alike, with settings (any value
// that encodes as a JSON object; nil: {}). id follows the _meta key
// rules with a mandatory prefix, such as "com.example/search" (SEP-2133).
// Advertising an id again replaces its settings. A malformed id or
// settings that are not an object is an error starting with "server:".
func (s *Server) AddExtension(id string, settings any) error {
	return s.noteRegistration(s.addExtension(id, settings))
}

func (s *Server) addExtension(id string, settings any) error {
	if err := checkExtensionID(id); err != nil {
		return fmt.Errorf("server: AddExtension %q: %w", id, err)
	}
	raw := jsontext.Value("{}")
	if settings != nil {
		b, err := json.Marshal(settings)
		if err != nil {
			return fmt.Errorf("server: AddExtension %q: encoding settings: %w", id, err)
		}
		if jsontext.Value(b).Kind() != '{' {
			return fmt.Errorf("server: AddExtension %q: settings must encode as a JSON object", id)
		}
		raw = b
	}
	s.mu.Lock()
	if s.extensions == nil {
		s.extensions = make(map[string]jsontext.Value)
	}
	s.extensions[id] = raw
	s.mu.Unlock()
	return nil
}

// extensionsCopy returns the advertised extensions (nil: none).
func (s *Server) extensionsCopy() map[string]jsontext.Value {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.extensions)
}

// checkExtensionID checks an extension identifier: a _meta key with a
// mandatory prefix — dot-separated labels (a letter first, a letter or
// digit last, letters, digits and hyphens between), a slash, a name.
func checkExtensionID(id string) error {
	prefix, name, ok := strings.Cut(id, "/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("an extension id is prefix/name, such as com.example/search")
	}
	for label := range strings.SplitSeq(prefix, ".") {
		if !validLabel(label) {
			return fmt.Errorf("invalid prefix label %q", label)
		}
	}
	for _, r := range name {
		if !isAlnum(r) && r != '-' && r != '_' && r != '.' {
			return fmt.Errorf("invalid character %q in the name", r)
		}
	}
	if !isAlnum(rune(name[0])) || !isAlnum(rune(name[len(name)-1])) {
		return fmt.Errorf("the name must begin and end with a letter or digit")
	}
	return nil
}

func validLabel(l string) bool {
	if l == "" || !isLetter(rune(l[0])) || !isAlnum(rune(l[len(l)-1])) {
		return false
	}
	for _, r := range l {
		if !isAlnum(r) && r != '-' {
			return false
		}
	}
	return true
}

func isLetter(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' }
func isAlnum(r rune) bool  { return isLetter(r) || '0' <= r && r <= '9' }

// checkExtensionMethod refuses names the protocol itself uses: an
// extension adds methods, it does not replace core ones.
func checkExtensionMethod(method string) error {
	switch {
	case method == "":
		return fmt.Errorf("the method needs a name")
	case isCoreMethod(method):
		return fmt.Errorf("%s is a method of the protocol itself", method)
	}
	return nil
}

// isCoreMethod reports whether method is one this server or the protocol
// defines in any revision (tasks included).
func isCoreMethod(method string) bool {
	if _, ok := methods[method]; ok {
		return true
	}
	switch method {
	case mcp.MethodInitialize, mcp.MethodPing, mcp.MethodServerDiscover, mcp.MethodSubscriptionsListen,
		mcp.MethodSamplingCreateMessage, mcp.MethodElicitationCreate, mcp.MethodRootsList:
		return true
	}
	return strings.HasPrefix(method, "tasks/") || strings.HasPrefix(method, "notifications/") && coreNotification(method)
}

func coreNotification(method string) bool {
	switch method {
	case mcp.NotificationInitialized, mcp.NotificationCancelled, mcp.NotificationProgress, mcp.NotificationMessage,
		mcp.NotificationToolsListChanged, mcp.NotificationPromptsListChanged, mcp.NotificationResourcesListChanged,
		mcp.NotificationResourcesUpdated, mcp.NotificationRootsListChanged, mcp.NotificationElicitationComplete,
		mcp.NotificationSubscriptionsAcknowledged, mcp.NotificationTasksStatus:
		return true
	}
	return strings.HasPrefix(method, "notifications/tasks")
}

// AddMethod registers the handler of an extension request, served in
// both eras: on legacy sessions after initialize like any method, and as
// 2026-07-28 requests with the _meta envelope (the result then carries
// resultType and serverInfo like every modern result). Registering a
// method again replaces its handler. A core method name or a nil handler
// is an error starting with "server:"; nothing is registered.
func AddMethod[In, Out any](s *Server, method string, h MethodHandler[In, Out]) error {
	return s.noteRegistration(addMethod(s, method, h))
}

func addMethod[In, Out any](s *Server, method string, h MethodHandler[In, Out]) error {
	if err := checkExtensionMethod(method); err != nil {
		return fmt.Errorf("server: AddMethod %q: %w", method, err)
	}
	if h == nil {
		return fmt.Errorf("server: AddMethod %q: nil handler", method)
	}
	m := &extMethod{handle: func(ctx context.Context, req *Request, raw jsontext.Value) (any, error) {
		var in In
		if err := decodeParams(raw, &in); err != nil {
			return nil, err
		}
		out, err := h(ctx, req, in)
		if err != nil {
			if e, ok := jsonrpc.AsError(err); ok {
				return nil, e
			}
			return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %s", seam.ShortErr(err))
		}
		body, err := json.Marshal(out)
		if err != nil || jsontext.Value(body).Kind() != '{' {
			s.log.ErrorContext(ctx, "server: an extension method's result is not a JSON object", "method", method, "err", err)
			return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: the result of %s is not a JSON object", method)
		}
		return splitResult(body)
	}}
	s.extMethods.put(map[string]*extMethod{method: m})
	return nil
}

// AddNotification registers the handler of an extension notification
// from the client: on legacy sessions, and on 2026-07-28 connections
// that carry notifications (stdio). A core notification name or a nil
// handler is an error starting with "server:".
func AddNotification[In any](s *Server, method string, h NotificationHandler[In]) error {
	return s.noteRegistration(addNotification(s, method, h))
}

func addNotification[In any](s *Server, method string, h NotificationHandler[In]) error {
	if err := checkExtensionMethod(method); err != nil {
		return fmt.Errorf("server: AddNotification %q: %w", method, err)
	}
	if h == nil {
		return fmt.Errorf("server: AddNotification %q: nil handler", method)
	}
	n := &extNotification{handle: func(ctx context.Context, n *Notification, raw jsontext.Value) {
		var in In
		if err := decodeParams(raw, &in); err != nil {
			s.log.DebugContext(ctx, "server: extension notification with malformed params dropped", "method", method, "err", err)
			return
		}
		var meta struct {
			Meta mcp.Meta `json:"_meta"`
		}
		if raw != nil && json.Unmarshal(raw, &meta) == nil {
			n.Meta = meta.Meta
		}
		h(ctx, n, in)
	}}
	s.extNotifications.put(map[string]*extNotification{method: n})
	return nil
}

// handleExtNotification runs the handler of an extension notification;
// it reports whether one was registered.
func (s *Server) handleExtNotification(ctx context.Context, ss *Session, method string, raw jsontext.Value) bool {
	n, ok := s.extNotifications.get(method)
	if !ok {
		return false
	}
	n.handle(ctx, &Notification{Method: method, Session: ss}, raw)
	return true
}

// Notify sends a notification to the client with this request (an
// extension's notification; on Streamable HTTP it travels on the
// request's stream), in either era. It fails once the handler has
// returned.
func (r *Request) Notify(ctx context.Context, method string, params any) error {
	if method == "" || coreNotification(method) {
		return fmt.Errorf("server: Notify: %q is not an extension notification", method)
	}
	if r.ended.Load() {
		return ErrRequestEnded
	}
	return r.out.Notify(ctx, r.id, method, params)
}

// Notify sends an extension notification to the session's client,
// related to no request (on Streamable HTTP it goes to the GET stream).
func (ss *Session) Notify(ctx context.Context, method string, params any) error {
	if method == "" || coreNotification(method) {
		return fmt.Errorf("server: Notify: %q is not an extension notification", method)
	}
	return ss.conn.NotifyWith(ctx, method, params, jsonrpc.CallOptions{})
}

// ClientExtension returns the settings the client declared for extension
// id in its capabilities.extensions (legacy: in initialize; 2026-07-28:
// in this request's envelope), and whether it declared it.
func (r *Request) ClientExtension(id string) (jsontext.Value, bool) {
	if r.caps == nil {
		return nil, false
	}
	v, ok := r.caps.Extensions[id]
	return v.Clone(), ok
}

// extResult is the result of an extension method: the handler's object
// with _meta and resultType lifted out, so that the modern era can stamp
// them like any result's.
type extResult struct {
	ResultType mcp.ResultType
	Meta       mcp.Meta
	body       jsontext.Value // the other members, as one object
}

// splitResult lifts _meta and resultType out of an encoded result object.
func splitResult(obj jsontext.Value) (*extResult, error) {
	var members map[string]jsontext.Value
	if err := json.Unmarshal(obj, &members); err != nil {
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %s", seam.ShortErr(err))
	}
	r := &extResult{}
	if m, ok := members["_meta"]; ok {
		if err := json.Unmarshal(m, &r.Meta); err != nil {
			return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: result _meta: %s", seam.ShortErr(err))
		}
		delete(members, "_meta")
	}
	if rt, ok := members["resultType"]; ok {
		_ = json.Unmarshal(rt, &r.ResultType)
		delete(members, "resultType")
	}
	body, err := json.Marshal(members, json.Deterministic(true))
	if err != nil {
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %s", seam.ShortErr(err))
	}
	r.body = body
	return r, nil
}

// MarshalJSONTo writes the body's members, then resultType and _meta
// when set.
func (r *extResult) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	if err := jsontok.WriteMembers(enc, r.body); err != nil {
		return err
	}
	if r.ResultType != "" {
		if err := enc.WriteToken(jsontext.String("resultType")); err != nil {
			return err
		}
		if err := enc.WriteToken(jsontext.String(string(r.ResultType))); err != nil {
			return err
		}
	}
	if len(r.Meta) > 0 {
		if err := enc.WriteToken(jsontext.String("_meta")); err != nil {
			return err
		}
		if err := r.Meta.MarshalJSONTo(enc); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// notificationSession is the session a notification belongs to: none
// when it carries a 2026-07-28 claim (a stdio process serves both eras).
func (ss *Session) notificationSession(params jsontext.Value) *Session {
	if params == nil {
		return ss
	}
	if wp, err := decodeWire(params); err == nil {
		if _, claimed, _ := liftEnvelope(ss.srv, wp); claimed {
			return nil
		}
	}
	return ss
}
