package client

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// handler is the Client as the connection's jsonrpc.Handler.
type handler Client

// HandleRequest answers the server's requests. Every request gets exactly
// one answer (the connection guarantees it): the handler's result; the
// *jsonrpc.Error it returned, code and all; -32603 for any other failure;
// -32601 when no handler is registered.
func (h *handler) HandleRequest(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	c := (*Client)(h)
	if c.chain == nil {
		return c.serveRequest(ctx, msg.Method, msg.Params)
	}
	return c.inbound(ctx, msg.Method, msg.Params, false, 0, c.serveRequest)
}

// serveRequest answers a request of the server (at the end of the
// interceptors).
func (c *Client) serveRequest(ctx context.Context, method string, raw jsontext.Value) (any, error) {
	msg := &jsonrpc.Message{Method: method, Params: raw}
	switch msg.Method {
	case mcp.MethodPing:
		return struct{}{}, nil
	case mcp.MethodElicitationCreate:
		if c.handlers().elicit == nil {
			return nil, methodNotFound(msg.Method)
		}
		if err := c.associated(msg.Method); err != nil {
			return nil, err
		}
		var p mcp.ElicitParams
		if err := decode(msg.Params, &p); err != nil {
			return nil, err
		}
		if !c.canElicit(&p) {
			return nil, jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: this client did not declare URL-mode elicitation")
		}
		res, err := c.elicit(ctx, &p)
		if err != nil {
			return nil, internal(msg.Method, err)
		}
		return res, nil
	case mcp.MethodSamplingCreateMessage:
		if c.handlers().sample == nil {
			return nil, methodNotFound(msg.Method)
		}
		if err := c.associated(msg.Method); err != nil {
			return nil, err
		}
		var p mcp.CreateMessageParams
		if err := decode(msg.Params, &p); err != nil {
			return nil, err
		}
		if !c.canSample(&p) {
			return nil, jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: this client did not declare sampling.tools")
		}
		res, err := c.sample(ctx, &p)
		if err != nil {
			return nil, internal(msg.Method, err)
		}
		return res, nil
	case mcp.MethodRootsList:
		if c.handlers().roots == nil {
			return nil, methodNotFound(msg.Method)
		}
		if err := c.associated(msg.Method); err != nil {
			return nil, err
		}
		res, err := c.listRoots(ctx)
		if err != nil {
			return nil, internal(msg.Method, err)
		}
		return res, nil
	}
	return nil, methodNotFound(msg.Method)
}

// The answers to the server's elicitation, sampling and roots requests.
// The same code serves a legacy server→client request (HandleRequest)
// and an input request embedded in a modern input-required result (the
// MRTR driver): one set of handlers for both eras.

// canElicit reports whether the client declared the mode p asks in.
func (c *Client) canElicit(p *mcp.ElicitParams) bool {
	return p.EffectiveMode() != mcp.ElicitModeURL || c.declared().Elicitation.SupportsURL()
}

// canSample reports whether the client declared what p needs (tool use).
func (c *Client) canSample(p *mcp.CreateMessageParams) bool {
	return (len(p.Tools) == 0 && p.ToolChoice == nil) || c.opts.SamplingTools
}

// elicit asks Options.ElicitHandler, then fills an accepted form's omitted
// fields with the schema's defaults when ElicitationDefaults is set
// (SEP-1034). An action other than accept, decline and cancel is the
// handler's error, and content goes only with an accepted form (the
// ElicitResult rules, which servers check): it is dropped otherwise.
func (c *Client) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	h := c.handlers().elicit
	if h == nil {
		return nil, errors.New("no elicitation handler")
	}
	res, err := h(ctx, p)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("the elicitation handler returned no result")
	}
	switch res.Action {
	case mcp.ElicitActionAccept, mcp.ElicitActionDecline, mcp.ElicitActionCancel:
	default:
		return nil, fmt.Errorf("the elicitation handler returned action %q, want %q, %q or %q",
			res.Action, mcp.ElicitActionAccept, mcp.ElicitActionDecline, mcp.ElicitActionCancel)
	}
	form := res.Action == mcp.ElicitActionAccept && p.EffectiveMode() == mcp.ElicitModeForm
	if !form && res.Content != nil {
		out := *res
		out.Content = nil
		res = &out
	}
	if c.opts.ElicitationDefaults && form {
		res.Content = ApplyElicitationDefaults(p.RequestedSchema, res.Content)
	}
	return res, nil
}

// sample asks Options.CreateMessageHandler.
func (c *Client) sample(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	h := c.handlers().sample
	if h == nil {
		return nil, errors.New("no sampling handler")
	}
	res, err := h(ctx, p)
	if err == nil && res == nil {
		err = errors.New("the sampling handler returned no result")
	}
	return res, err
}

// listRoots asks Options.ListRootsHandler; no roots is an empty list.
func (c *Client) listRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	h := c.handlers().roots
	if h == nil {
		return nil, errors.New("no roots handler")
	}
	res, err := h(ctx)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, errors.New("the roots handler returned no result")
	}
	if res.Roots == nil {
		res.Roots = []mcp.Root{}
	}
	return res, nil
}

func methodNotFound(method string) *jsonrpc.Error {
	return jsonrpc.Errorf(mcp.CodeMethodNotFound, "Method not found: %s", method)
}

func internal(method string, err error) error {
	if e, ok := jsonrpc.AsError(err); ok {
		return e
	}
	return jsonrpc.Errorf(mcp.CodeInternalError, "Internal error handling %s request: %v", method, err)
}

func decode(raw jsontext.Value, v any) error {
	if raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: %v", err)
	}
	return nil
}

// HandleNotification runs on the connection's reader: progress goes to
// the waiting call at once; everything else is queued, in order, for the
// notification goroutine.
func (h *handler) HandleNotification(ctx context.Context, n *jsonrpc.Message) {
	c := (*Client)(h)
	if c.chain == nil {
		c.serveNotification(ctx, n)
		return
	}
	_, err := c.inbound(ctx, n.Method, n.Params, true, 0, func(ctx context.Context, method string, raw jsontext.Value) (any, error) {
		c.serveNotification(ctx, &jsonrpc.Message{Method: method, Params: raw})
		return nil, nil
	})
	if err != nil {
		c.log.Debug("client: notification dropped by an interceptor", "method", n.Method, "err", err)
	}
}

// serveNotification handles a notification of the server (at the end of
// the interceptors).
func (c *Client) serveNotification(ctx context.Context, n *jsonrpc.Message) {
	if c.cache != nil {
		c.cache.invalidateFor(n.Method, n.Params)
	}
	if n.Method == mcp.NotificationToolsListChanged {
		c.forgetOutputs()
	}
	if n.Method == mcp.NotificationTasksStatus {
		c.taskStatusNote(n.Params)
	}
	if c.demux(n) {
		return
	}
	if n.Method == mcp.NotificationProgress {
		var p mcp.ProgressParams
		if decode(n.Params, &p) != nil {
			return
		}
		if fn, ok := c.progress.Load(p.ProgressToken); ok {
			fn.(func(*mcp.ProgressParams))(&p)
		}
		return
	}
	select {
	case c.notes <- n:
	case <-ctx.Done():
	}
}

func (c *Client) runNotifications(ctx context.Context) {
	defer close(c.notesDone)
	for {
		select {
		case n := <-c.notes:
			c.notify(ctx, n)
		case <-ctx.Done():
			return
		}
	}
}

func (c *Client) notify(ctx context.Context, n *jsonrpc.Message) {
	o := &c.opts
	switch n.Method {
	case mcp.NotificationMessage:
		if o.OnLog != nil {
			var p mcp.LoggingMessageParams
			if decode(n.Params, &p) == nil {
				o.OnLog(ctx, &p)
			}
			return
		}
	case mcp.NotificationToolsListChanged:
		if o.OnToolsListChanged != nil {
			o.OnToolsListChanged(ctx)
			return
		}
	case mcp.NotificationPromptsListChanged:
		if o.OnPromptsListChanged != nil {
			o.OnPromptsListChanged(ctx)
			return
		}
	case mcp.NotificationResourcesListChanged:
		if o.OnResourcesListChanged != nil {
			o.OnResourcesListChanged(ctx)
			return
		}
	case mcp.NotificationResourcesUpdated:
		if o.OnResourceUpdated != nil {
			var p mcp.ResourceUpdatedNotificationParams
			if decode(n.Params, &p) == nil {
				o.OnResourceUpdated(ctx, p.URI)
			}
			return
		}
	case mcp.NotificationElicitationComplete:
		if o.OnElicitationComplete != nil {
			var p mcp.ElicitationCompleteParams
			if decode(n.Params, &p) == nil {
				o.OnElicitationComplete(ctx, p.ElicitationID)
			}
			return
		}
	}
	if o.OnNotification != nil {
		o.OnNotification(ctx, n.Method, n.Params)
	}
}

type progressKey struct{}

// WithProgress returns a context that asks for progress on the request
// it is used with: the client attaches a fresh progress token and calls
// fn for each notifications/progress the server sends for it. fn runs on
// the connection's reader goroutine: it must be quick and must not call
// the client.
func WithProgress(ctx context.Context, fn func(*mcp.ProgressParams)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

func progressFunc(ctx context.Context) func(*mcp.ProgressParams) {
	fn, _ := ctx.Value(progressKey{}).(func(*mcp.ProgressParams))
	return fn
}

func randToken() string { return rand.Text() }
