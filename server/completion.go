package server

import (
	"context"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// CompleteRequest is a completion/complete request as its handler sees it.
type CompleteRequest struct {
	*Request
	Params *mcp.CompleteParams
}

// CompletionHandler answers completion/complete for prompt arguments and
// resource template variables. It is called only for a reference to a
// registered prompt, resource (by URI) or resource template (by URI
// template) that the caller may see (Options.Visibility); any other is
// answered -32602 without calling it.
type CompletionHandler func(ctx context.Context, req *CompleteRequest) (*mcp.CompleteResult, error)

// maxCompletionValues is the spec's cap on values in one completion.
const maxCompletionValues = 100

// SetCompletionHandler sets the handler of completion/complete and with
// it the completions capability; nil removes both.
func (s *Server) SetCompletionHandler(h CompletionHandler) {
	s.mu.Lock()
	s.completion = h
	s.mu.Unlock()
}

func complete(ctx context.Context, s *Server, req *Request, wp *wireParams) (any, error) {
	s.mu.Lock()
	h := s.completion
	s.mu.Unlock()
	if h == nil {
		return nil, jsonrpc.Errorf(mcp.CodeMethodNotFound, "Method not found: %s (no completion handler)", mcp.MethodCompletionComplete)
	}
	p := mcp.CompleteParams{Meta: wp.Meta}
	if err := decodeMember("ref", wp.rareOf().Ref, &p.Ref); err != nil {
		return nil, err
	}
	if err := decodeMember("argument", wp.rareOf().Argument, &p.Argument); err != nil {
		return nil, err
	}
	if err := decodeMember("context", wp.rareOf().Context, &p.Context); err != nil {
		return nil, err
	}
	req.meta = p.Meta
	switch p.Ref.Type {
	case mcp.RefPrompt:
		if e, ok := s.prompts.get(p.Ref.Name); !ok || !s.visible(ctx, req, promptItem(e)) {
			return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: unknown prompt %q", p.Ref.Name)
		}
	case mcp.RefResource:
		if p.Ref.URI == "" {
			return nil, jsonrpc.NewError(mcp.CodeInvalidParams, `Invalid params: ref/resource needs "uri"`)
		}
		if !s.visibleRef(ctx, req, p.Ref.URI) { // hidden: exactly as unknown
			return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: unknown resource or resource template %q", p.Ref.URI)
		}
	default:
		return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: unknown reference type %q", p.Ref.Type)
	}
	res, err := h(ctx, &CompleteRequest{Request: req, Params: &p})
	if err != nil {
		return nil, handlerError(err)
	}
	if res == nil {
		res = &mcp.CompleteResult{}
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	if n := len(res.Completion.Values); n > maxCompletionValues {
		// The spec caps a completion at 100 values; say there are more.
		res.Completion.Values = res.Completion.Values[:maxCompletionValues]
		res.Completion.HasMore = true
		if res.Completion.Total == nil {
			total := int64(n)
			res.Completion.Total = &total
		}
	}
	return res, nil
}

func setLevel(_ context.Context, s *Server, req *Request, wp *wireParams) (any, error) {
	if !s.opts.Logging {
		return nil, jsonrpc.Errorf(mcp.CodeMethodNotFound, "Method not found: %s (logging is not enabled)", mcp.MethodLoggingSetLevel)
	}
	var p mcp.SetLevelParams
	if err := decodeMember("level", wp.rareOf().Level, &p.Level); err != nil {
		return nil, err
	}
	if !p.Level.Valid() {
		return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: unknown logging level %q", p.Level)
	}
	err := req.session.update(func() func() {
		ss, prev := req.session, req.session.level
		ss.level = p.Level
		return func() { ss.level = prev }
	})
	if err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// visibleRef reports whether a ref/resource's uri names a registered
// resource or resource template (by its URI template) that the caller
// of req may see.
func (s *Server) visibleRef(ctx context.Context, req *Request, uri string) bool {
	if e, ok := s.resources.get(uri); ok && s.visible(ctx, req, resourceItem(e)) {
		return true
	}
	e, ok := s.templates.get(uri)
	return ok && s.visible(ctx, req, templateItem(e))
}
