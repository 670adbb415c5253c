package server

import (
	"context"

	"github.com/mcpkit/mcpkit/internal/revisions"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// methodFunc serves one method: it decodes params once and calls the
// registered handler. The same functions serve every era; what differs
// per era is the Request's era (era.go), which they ask.
type methodFunc func(ctx context.Context, s *Server, req *Request, wp *wireParams) (any, error)

type method struct {
	handle methodFunc
	// gate reports whether the server offers the method now (its
	// capability follows what is registered).
	gate func(*Server) bool
}

func hasTools(s *Server) bool   { return s.tools.len() > 0 || s.opts.Declare.Tools != nil }
func hasPrompts(s *Server) bool { return s.prompts.len() > 0 || s.opts.Declare.Prompts != nil }
func hasResources(s *Server) bool {
	return s.resources.len() > 0 || s.templates.len() > 0 || s.opts.Declare.Resources != nil
}

// methods is the dispatch table of client→server requests other than
// the lifecycle ones (initialize, ping), which sessions answer.
var methods = map[string]method{
	mcp.MethodToolsList:              {handle: listTools, gate: hasTools},
	mcp.MethodToolsCall:              {handle: callTool, gate: hasTools},
	mcp.MethodPromptsList:            {handle: listPrompts, gate: hasPrompts},
	mcp.MethodPromptsGet:             {handle: getPrompt, gate: hasPrompts},
	mcp.MethodResourcesList:          {handle: listResources, gate: hasResources},
	mcp.MethodResourcesTemplatesList: {handle: listResourceTemplates, gate: hasResources},
	mcp.MethodResourcesRead:          {handle: readResource, gate: hasResources},
	mcp.MethodResourcesSubscribe:     {handle: subscribe, gate: hasResources},
	mcp.MethodResourcesUnsubscribe:   {handle: unsubscribe, gate: hasResources},
	mcp.MethodCompletionComplete:     {handle: complete},
	mcp.MethodLoggingSetLevel:        {handle: setLevel},
}

// dispatch finds and runs the method for req.
func (s *Server) dispatch(ctx context.Context, req *Request, name string, params *wireParams) (any, error) {
	if req.era().tasks().HasMethod(req.version, name) {
		return s.tasksMethod(ctx, req, name, params)
	}
	m, ok := methods[name]
	if !ok {
		if x, ok := s.extMethods.get(name); ok {
			return x.handle(ctx, req, params.raw)
		}
	}
	if !ok || !revisions.HasMethod(req.version, name) || (m.gate != nil && !m.gate(s)) {
		return nil, jsonrpc.Errorf(mcp.CodeMethodNotFound, "Method not found: %s", name)
	}
	res, err := m.handle(ctx, s, req, params)
	in, isInput := asInput(err)
	if !isInput {
		return res, err
	}
	// A handler asked for input (SEP-2322).
	if !revisions.IsMRTRMethod(name) || req.call == nil {
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %s cannot answer input_required; only tools/call, prompts/get and resources/read can", name)
	}
	if verr := in.validate(); verr != nil {
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %v", verr)
	}
	return req.era().needInput(ctx, s, req, m, params, in)
}
