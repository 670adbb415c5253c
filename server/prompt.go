package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpkit/mcpkit/server/internal/seam"

	"github.com/go-json-experiment/json"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// GetPromptRequest is a prompts/get request as its handler sees it.
type GetPromptRequest struct {
	*Request
	Params *mcp.GetPromptParams
}

// PromptHandler answers prompts/get for one prompt. Required arguments
// have been checked before it runs. An error that is a *jsonrpc.Error is
// sent as it is; any other error becomes -32603.
type PromptHandler func(ctx context.Context, req *GetPromptRequest) (*mcp.GetPromptResult, error)

type promptEntry struct {
	prompt   mcp.Prompt
	required []string
	handler  PromptHandler
}

// AddPrompt registers a prompt; registering a name again replaces it.
// Sessions are told with notifications/prompts/list_changed. A prompt
// without a name or a nil handler is an error (starting with "server:",
// naming the prompt); nothing is registered then. AddPrompt never panics.
func (s *Server) AddPrompt(p *mcp.Prompt, h PromptHandler) error {
	return s.noteRegistration(s.addPrompt(p, h))
}

func (s *Server) addPrompt(p *mcp.Prompt, h PromptHandler) error {
	switch {
	case p == nil:
		return errors.New("server: AddPrompt: nil prompt")
	case p.Name == "":
		return errors.New("server: AddPrompt: the prompt needs a name")
	case h == nil:
		return fmt.Errorf("server: AddPrompt %q: nil handler", p.Name)
	}
	e := &promptEntry{prompt: *p, handler: h}
	for _, a := range p.Arguments {
		if a.Required {
			e.required = append(e.required, a.Name)
		}
	}
	s.prompts.put(map[string]*promptEntry{p.Name: e})
	s.announceItems(mcp.NotificationPromptsListChanged, p.Name)
	return nil
}

// RemovePrompts unregisters prompts by name.
func (s *Server) RemovePrompts(names ...string) {
	if s.prompts.remove(names...) {
		s.announceItems(mcp.NotificationPromptsListChanged, names...)
	}
}

func listPrompts(ctx context.Context, s *Server, req *Request, wp *wireParams) (any, error) {
	entries, next, err := s.prompts.page(wp.Cursor, s.pageSize(), keep(s, ctx, req, promptItem))
	if err != nil {
		return nil, err
	}
	res := &mcp.ListPromptsResult{Prompts: make([]mcp.Prompt, len(entries)), NextCursor: next}
	for i, e := range entries {
		res.Prompts[i] = e.prompt
	}
	return res, nil
}

func getPrompt(ctx context.Context, s *Server, req *Request, wp *wireParams) (any, error) {
	p := mcp.GetPromptParams{Meta: wp.Meta, Name: wp.Name}
	if err := decodeMember("arguments", wp.Arguments, &p.Arguments); err != nil {
		return nil, err
	}
	req.meta = p.Meta
	e, ok := s.prompts.get(p.Name)
	if !ok || !s.visible(ctx, req, promptItem(e)) { // hidden: exactly as unknown
		return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: unknown prompt %q", p.Name)
	}
	if err := s.prepareInput(ctx, req, mrtrCall{method: mcp.MethodPromptsGet, target: p.Name, args: promptArgs(p.Arguments)}, wp.InputResponses, wp.RequestState); err != nil {
		return nil, err
	}
	for _, name := range e.required {
		if _, ok := p.Arguments[name]; !ok {
			return nil, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: prompt %q needs argument %q", p.Name, name)
		}
	}
	res, err := e.handler(ctx, &GetPromptRequest{Request: req, Params: &p})
	if err != nil {
		return nil, handlerError(err)
	}
	if res == nil {
		return nil, jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the prompt handler returned no result")
	}
	return res, nil
}

// handlerError maps a handler's error for methods whose errors are
// JSON-RPC errors (everything but tools/call).
func handlerError(err error) error {
	if in, ok := asInput(err); ok {
		return in
	}
	if e, ok := jsonrpc.AsError(err); ok {
		return e
	}
	return jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %s", seam.ShortErr(err))
}

// promptArgs encodes prompt arguments for the requestState digest.
func promptArgs(args map[string]string) jsontext.Value {
	if len(args) == 0 {
		return nil
	}
	raw, _ := json.Marshal(args, json.Deterministic(true))
	return raw
}
