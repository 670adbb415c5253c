package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/yosida95/uritemplate/v3"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// ReadResourceRequest is a resources/read request as its handler sees it.
// Vars holds the values of the template's variables when the URI matched
// a resource template.
type ReadResourceRequest struct {
	*Request
	Params *mcp.ReadResourceParams
	Vars   map[string]string
}

// ResourceHandler answers resources/read. Return mcp.ErrResourceNotFound (or
// wrap it) when the URI names nothing: the client gets the error code of
// its protocol revision. Other errors are handled as for prompts.
type ResourceHandler func(ctx context.Context, req *ReadResourceRequest) (*mcp.ReadResourceResult, error)

type resourceEntry struct {
	resource mcp.Resource
	handler  ResourceHandler
}

type templateEntry struct {
	template mcp.ResourceTemplate
	compiled *uritemplate.Template
	handler  ResourceHandler
}

// AddResource registers a resource by URI; registering a URI again
// replaces it. Sessions are told with notifications/resources/list_changed.
// A resource without a URI or a nil handler is an error (starting with
// "server:", naming the resource); nothing is registered then. AddResource never panics.
func (s *Server) AddResource(r *mcp.Resource, h ResourceHandler) error {
	return s.noteRegistration(s.addResource(r, h))
}

func (s *Server) addResource(r *mcp.Resource, h ResourceHandler) error {
	switch {
	case r == nil:
		return errors.New("server: AddResource: nil resource")
	case r.URI == "":
		return errors.New("server: AddResource: the resource needs a URI")
	case h == nil:
		return fmt.Errorf("server: AddResource %q: nil handler", r.URI)
	}
	s.resources.put(map[string]*resourceEntry{r.URI: {resource: *r, handler: h}})
	s.announceItems(mcp.NotificationResourcesListChanged, r.URI)
	return nil
}

// AddResourceTemplate registers an RFC 6570 resource template. A
// resources/read whose URI matches no registered resource is served by
// the first template (in template order) that matches it; resources and
// templates the caller may not see (Options.Visibility) are passed over. A template
// without a URI template, one that does not parse, or a nil handler is an
// error (starting with "server:", naming the template); nothing is
// registered then.
// AddResourceTemplate never panics.
func (s *Server) AddResourceTemplate(t *mcp.ResourceTemplate, h ResourceHandler) error {
	return s.noteRegistration(s.addResourceTemplate(t, h))
}

func (s *Server) addResourceTemplate(t *mcp.ResourceTemplate, h ResourceHandler) error {
	switch {
	case t == nil:
		return errors.New("server: AddResourceTemplate: nil template")
	case t.URITemplate == "":
		return errors.New("server: AddResourceTemplate: the template needs a URI template")
	case h == nil:
		return fmt.Errorf("server: AddResourceTemplate %q: nil handler", t.URITemplate)
	}
	compiled, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return fmt.Errorf("server: AddResourceTemplate %q: %v", t.URITemplate, err)
	}
	s.templates.put(map[string]*templateEntry{t.URITemplate: {template: *t, compiled: compiled, handler: h}})
	s.announceItems(mcp.NotificationResourcesListChanged, t.URITemplate)
	return nil
}

// RemoveResources unregisters resources by URI.
func (s *Server) RemoveResources(uris ...string) {
	if s.resources.remove(uris...) {
		s.announceItems(mcp.NotificationResourcesListChanged, uris...)
	}
}

// RemoveResourceTemplates unregisters resource templates.
func (s *Server) RemoveResourceTemplates(templates ...string) {
	if s.templates.remove(templates...) {
		s.announceItems(mcp.NotificationResourcesListChanged, templates...)
	}
}

// ResourceUpdated tells every session subscribed to uri that the
// resource changed (notifications/resources/updated).
func (s *Server) ResourceUpdated(uri string) {
	s.announce(mcp.NotificationResourcesUpdated, uri)
}

func listResources(ctx context.Context, s *Server, req *Request, wp *wireParams) (any, error) {
	entries, next, err := s.resources.page(wp.Cursor, s.pageSize(), keep(s, ctx, req, resourceItem))
	if err != nil {
		return nil, err
	}
	res := &mcp.ListResourcesResult{Resources: make([]mcp.Resource, len(entries)), NextCursor: next}
	for i, e := range entries {
		res.Resources[i] = e.resource
	}
	return res, nil
}

func listResourceTemplates(ctx context.Context, s *Server, req *Request, wp *wireParams) (any, error) {
	entries, next, err := s.templates.page(wp.Cursor, s.pageSize(), keep(s, ctx, req, templateItem))
	if err != nil {
		return nil, err
	}
	res := &mcp.ListResourceTemplatesResult{ResourceTemplates: make([]mcp.ResourceTemplate, len(entries)), NextCursor: next}
	for i, e := range entries {
		res.ResourceTemplates[i] = e.template
	}
	return res, nil
}

func readResource(ctx context.Context, s *Server, req *Request, wp *wireParams) (any, error) {
	p := mcp.ReadResourceParams{Meta: wp.Meta, URI: wp.URI}
	req.meta = p.Meta
	if p.URI == "" {
		return nil, jsonrpc.NewError(mcp.CodeInvalidParams, `Invalid params: resources/read needs "uri"`)
	}
	if err := s.prepareInput(ctx, req, mrtrCall{method: mcp.MethodResourcesRead, target: p.URI}, wp.InputResponses, wp.RequestState); err != nil {
		return nil, err
	}
	rr := &ReadResourceRequest{Request: req, Params: &p}
	var h ResourceHandler
	r, t, vals, _ := s.serving(p.URI, func(it Item) bool { return s.visible(ctx, req, it) })
	switch {
	case r != nil:
		h = r.handler
	case t != nil:
		rr.Vars = make(map[string]string, len(vals))
		for k, v := range vals {
			rr.Vars[k] = v.String()
		}
		h = t.handler
	}
	if h == nil {
		return nil, req.era().resourceNotFound(p.URI)
	}
	res, err := h(ctx, rr)
	if in, ok := asInput(err); ok {
		return nil, in
	}
	if errors.Is(err, mcp.ErrResourceNotFound) {
		return nil, req.era().resourceNotFound(p.URI)
	}
	if err != nil {
		return nil, handlerError(err)
	}
	if res == nil || len(res.Contents) == 0 {
		// SEP-2164: a missing resource is an error, never empty contents.
		return nil, req.era().resourceNotFound(p.URI)
	}
	return res, nil
}

// serving finds what serves uri to a caller who sees the items see
// accepts: the resource registered at uri, else the first template (in
// template order) that matches it, with the values of its variables. One
// the caller cannot see is passed over exactly as if it were not
// registered, so a hidden item never changes what serves a URI. matched
// reports whether anything registered matches uri, seen or not.
func (s *Server) serving(uri string, see func(Item) bool) (r *resourceEntry, t *templateEntry, vals uritemplate.Values, matched bool) {
	if e, ok := s.resources.get(uri); ok {
		matched = true
		if see(resourceItem(e)) {
			return e, nil, nil, true
		}
	}
	for _, e := range s.templates.all() {
		if v := e.compiled.Match(uri); v != nil {
			matched = true
			if see(templateItem(e)) {
				return nil, e, v, true
			}
		}
	}
	return nil, nil, nil, matched
}

// resourceNotFound is the resource-not-found error with the era's code
// (era.resourceNotFound, SEP-2164).
func resourceNotFound(code int64, uri string) *jsonrpc.Error {
	return jsonrpc.Errorf(code, "Resource not found: %s", uri).WithData(map[string]string{"uri": uri})
}

// subscribe serves resources/subscribe. Any URI is accepted, whether or
// not anything serves it or the caller may see it (Options.Visibility):
// updates are filtered as they are delivered (Server.hears), so a
// subscription to a hidden URI is answered as one to an unknown URI and
// stays silent.
func subscribe(_ context.Context, _ *Server, req *Request, wp *wireParams) (any, error) {
	p := mcp.SubscribeParams{Meta: wp.Meta, URI: wp.URI}
	if p.URI == "" {
		return nil, jsonrpc.NewError(mcp.CodeInvalidParams, `Invalid params: resources/subscribe needs "uri"`)
	}
	ss := req.session
	err := ss.update(func() func() {
		if _, had := ss.subscribed[p.URI]; had {
			return func() {}
		}
		ss.addSubscription(p.URI)
		return func() { delete(ss.subscribed, p.URI) }
	})
	if err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func unsubscribe(_ context.Context, _ *Server, req *Request, wp *wireParams) (any, error) {
	p := mcp.UnsubscribeParams{Meta: wp.Meta, URI: wp.URI}
	ss := req.session
	err := ss.update(func() func() {
		if _, had := ss.subscribed[p.URI]; !had {
			return func() {}
		}
		delete(ss.subscribed, p.URI)
		return func() { ss.addSubscription(p.URI) }
	})
	if err != nil {
		return nil, err
	}
	return struct{}{}, nil
}
