package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// callFunc makes one upstream call with this round's answers and state.
type callFunc[R any] func(ctx context.Context, c *client.Client, responses mcp.InputResponses, state string) (R, error)

// roundState is what the gateway keeps in the sealed requestState of an
// input-required result between a client's rounds.
type roundState struct {
	// Upstream names the upstream the call went to.
	Upstream string `json:"u"`
	// State is a modern upstream's own requestState, and Keys the input
	// requests it asked this round (only their answers are passed on).
	State string   `json:"s,omitzero"`
	Keys  []string `json:"k,omitzero"`
	// Pending names the held call of a legacy upstream, and Key the input
	// request it is waiting for.
	Pending string `json:"p,omitzero"`
	Key     string `json:"q,omitzero"`
	// Task names a 2026 upstream's task whose input requests the gateway's
	// own task relayed.
	Task string `json:"t,omitzero"`
}

// roundOf reads the gateway's state in req, once per request: the zero
// roundState on a first round, an error when the state is not u's.
func (u *upstream) roundOf(req *server.Request) (roundState, error) {
	raw := req.RequestState()
	if raw == "" {
		return roundState{}, nil // a first round: nothing decoded, nothing allocated
	}
	st := new(roundState)
	if err := json.Unmarshal([]byte(raw), st); err != nil || st.Upstream != u.cfg.Name {
		return roundState{}, jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: requestState does not belong to this call")
	}
	return *st, nil
}

// answers are the client's answers to the input requests st relayed (an
// upstream is given this round's, not those of earlier rounds the server
// keeps too).
func (st roundState) answers(req *server.Request) mcp.InputResponses {
	all := req.InputResponses()
	rs := make(mcp.InputResponses, len(st.Keys))
	for _, k := range st.Keys {
		if v, ok := all[k]; ok {
			rs[k] = v
		}
	}
	return rs
}

// toolHandler forwards tools/call of the upstream's tool name; tasks says
// the tool supports tasks and the upstream speaks 2026-07-28 (see
// tasks.go), required that it runs only as a task.
func (u *upstream) toolHandler(name string, tasks, required bool) server.ToolHandler {
	return func(ctx context.Context, req *server.CallToolRequest) (*mcp.CallToolResult, error) {
		st, err := u.roundOf(req.Request)
		if err != nil {
			return nil, err
		}
		if tasks && st.Task != "" {
			return u.awaitTask(st.Task)(ctx, req)
		}
		// One params value for every round of the call (a round sets its
		// own answers and state; rounds run one after the other).
		q := &mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments, Meta: passMeta(req.Request)}
		res, err := forward(ctx, u, req.Request, st, func(ctx context.Context, c *client.Client, rs mcp.InputResponses, state string) (*mcp.CallToolResult, error) {
			q.InputResponses, q.RequestState = rs, state
			if tasks && c.Era() == client.EraModern && (required || wantsTask(req)) {
				return u.taskCall(ctx, c, q)
			}
			res, err := c.CallTool(ctx, q)
			if res != nil {
				u.contentURIs(res.Content)
			}
			return res, err
		})
		if err == nil {
			return res, nil
		}
		var ut *upstreamTask
		if errors.As(err, &ut) {
			return nil, server.ContinueAsTask(u.awaitTask(ut.id))
		}
		return res, err
	}
}

func (u *upstream) promptHandler(name string) server.PromptHandler {
	return func(ctx context.Context, req *server.GetPromptRequest) (*mcp.GetPromptResult, error) {
		st, err := u.roundOf(req.Request)
		if err != nil {
			return nil, err
		}
		p := mcp.GetPromptParams{Name: name, Arguments: req.Params.Arguments, Meta: passMeta(req.Request)}
		return forward(ctx, u, req.Request, st, func(ctx context.Context, c *client.Client, rs mcp.InputResponses, state string) (*mcp.GetPromptResult, error) {
			q := p
			q.InputResponses, q.RequestState = rs, state
			res, err := c.GetPrompt(ctx, &q)
			if res != nil {
				for i := range res.Messages {
					u.contentURIs(mcp.Contents{res.Messages[i].Content})
				}
			}
			return res, err
		})
	}
}

// readHandler serves resources/read of the upstream's resources and
// templates: the URI loses its prefix on the way up and the contents'
// URIs get it back on the way down.
func (u *upstream) readHandler(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri, ok := inner(u.cfg.Prefix, kindResource, req.Params.URI)
	if !ok {
		return nil, mcp.ErrResourceNotFound
	}
	st, err := u.roundOf(req.Request)
	if err != nil {
		return nil, err
	}
	p := mcp.ReadResourceParams{URI: uri, Meta: passMeta(req.Request)}
	res, err := forward(ctx, u, req.Request, st, func(ctx context.Context, c *client.Client, rs mcp.InputResponses, state string) (*mcp.ReadResourceResult, error) {
		q := p
		q.InputResponses, q.RequestState = rs, state
		return c.ReadResource(ctx, &q)
	})
	if err != nil || res == nil {
		return res, err
	}
	for _, rc := range res.Contents {
		u.contentsURI(rc)
	}
	return res, nil
}

// contentsURI gives resource contents the URI clients know them by.
func (u *upstream) contentsURI(rc mcp.ResourceContents) {
	switch c := rc.(type) {
	case *mcp.TextResourceContents:
		c.URI = outer(u.cfg.Prefix, kindResource, c.URI)
	case *mcp.BlobResourceContents:
		c.URI = outer(u.cfg.Prefix, kindResource, c.URI)
	}
}

// contentURIs gives the resource links and embedded resources of a result
// the URIs clients know them by, so that reading one through the gateway
// finds it.
func (u *upstream) contentURIs(cs mcp.Contents) {
	if u.cfg.Prefix == "" {
		return
	}
	for _, c := range cs {
		switch b := c.(type) {
		case *mcp.ResourceLink:
			b.URI = outer(u.cfg.Prefix, kindResource, b.URI)
		case *mcp.EmbeddedResource:
			u.contentsURI(b.Resource)
		}
	}
}

// passMeta is the part of a client's _meta the upstream gets: its own
// keys, not the protocol's (the progress token and the reserved keys: the
// gateway's client sets its own; the server has already lifted a 2026
// envelope out of Meta), and the log level the client takes, so that a
// 2026 upstream sends no message the client would not get (Request.Log
// filters at the same level; a legacy upstream's session is at debug).
func passMeta(req *server.Request) mcp.Meta {
	m := req.Meta()
	var out mcp.Meta
	for k, v := range m {
		if k == "progressToken" || strings.HasPrefix(k, "io.modelcontextprotocol/") {
			continue
		}
		if out == nil {
			out = make(mcp.Meta, len(m)+1)
		}
		out[k] = v
	}
	if level := req.LogLevel(); level != "" {
		if out == nil {
			out = make(mcp.Meta, 1)
		}
		out[mcp.MetaKeyLogLevel] = level
	}
	return out
}

// forward makes a client's call on the upstream, in whichever era the
// upstream speaks, and bridges its input requests to the client. st is
// the request's round state (roundOf).
func forward[R any](ctx context.Context, u *upstream, req *server.Request, st roundState, call callFunc[R]) (R, error) {
	var zero R
	if st.Pending != "" {
		return resumeLegacy(ctx, u, req, st, call)
	}
	ctx, err := u.identify(ctx, req)
	if err != nil {
		return zero, upstreamError(err)
	}
	// A 2026 upstream asks only for what the calling client can answer,
	// and refuses (SEP-2575) what needs more, as it would refuse the client.
	ctx = client.WithCapabilities(ctx, bridged(req.ClientCapabilities()))
	ctl, err := u.control()
	if err != nil {
		return zero, upstreamError(err)
	}
	if ctl.Era() == client.EraModern {
		return forwardModern(ctx, u, req, st, ctl, call)
	}
	// The call's sink is set before it holds a connection: whatever the
	// upstream sends on the connection from then on is the call's.
	r := newRelay(ctx, req)
	in := &inflight{}
	in.sink.Store(r)
	l, err := u.acquire(ctx, u.g.clientKey(ctx, req), in)
	if err != nil {
		r.stop()
		return zero, upstreamError(err)
	}
	if st.Upstream != "" {
		l.release(false)
		r.stop()
		return zero, jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: the upstream reconnected in another era; start the call again")
	}
	return startLegacy(ctx, u, req, l, in, r, call)
}

// forwardModern makes a call of a 2026 upstream: its input requests
// come back as results, with certainty. An upstream reached by URL gets
// the call on a leased call connection (forwardModernLeased); a command or
// a Connect transport on its control connection, where its log messages
// reach the call only when it is the one call there that asked for them
// (modernSole).
func forwardModern[R any](ctx context.Context, u *upstream, req *server.Request, st roundState, c *client.Client, call callFunc[R]) (R, error) {
	if u.cfg.URL != "" {
		return forwardModernLeased(ctx, u, req, st, call)
	}
	var zero R
	key := u.g.clientKey(ctx, req)
	if err := u.reserve(key, u.perClientCap(false)); err != nil {
		return zero, err
	}
	defer u.unreserve(key)
	if err := u.takeSlot(ctx, u.queueWait()); err != nil {
		return zero, upstreamError(err)
	}
	defer func() { <-u.sem }()
	var rs mcp.InputResponses
	if st.Upstream != "" {
		rs = st.answers(req)
	}
	r := newRelay(ctx, req)
	in := &inflight{logs: req.LogLevel() != ""}
	in.sink.Store(r)
	u.addModern(in)
	res, err := call(r.context(ctx), c, rs, st.State)
	u.removeModern(in, retiring(ctx, err), c)
	r.stop()
	return modernOutcome(u, req, res, err)
}

// forwardModernLeased makes a call of a 2026 upstream reached by URL on a
// call connection it leases, as a legacy upstream's calls are: a client of
// its own over the upstream's HTTP client, so whatever arrives on it (the
// log messages on the call's response stream) is the call's, with
// certainty, however many calls are in flight. A connection costs one
// server/discover when it is opened, and is kept for the next call. A call
// given up on retires it, as on a legacy upstream: its response stream is
// closed, but a message already read from it may not have been handled
// yet, and must not reach the connection's next holder.
func forwardModernLeased[R any](ctx context.Context, u *upstream, req *server.Request, st roundState, call callFunc[R]) (R, error) {
	var zero R
	var rs mcp.InputResponses
	if st.Upstream != "" {
		rs = st.answers(req)
	}
	r := newRelay(ctx, req)
	in := &inflight{logs: req.LogLevel() != ""}
	in.sink.Store(r)
	l, err := u.acquire(ctx, u.g.clientKey(ctx, req), in)
	if err != nil {
		r.stop()
		return zero, upstreamError(err)
	}
	res, err := call(r.context(ctx), l.cc.c, rs, st.State)
	l.release(retiring(ctx, err))
	r.stop()
	return modernOutcome(u, req, res, err)
}

// modernOutcome is what a 2026 upstream's call gives the client: its
// result, the gateway's own input-required result relaying the upstream's
// questions, or the upstream's error.
func modernOutcome[R any](u *upstream, req *server.Request, res R, err error) (R, error) {
	if err == nil {
		return res, nil
	}
	var zero R
	var ire *client.InputRequiredError
	if errors.As(err, &ire) && ire.TaskID == "" && ire.Result != nil {
		return zero, u.relayInput(req, ire.Result)
	}
	if err != nil {
		return zero, upstreamError(err)
	}
	return res, nil
}

// relayInput turns a modern upstream's input-required result into the
// gateway's own: the same input requests under the same keys, and the
// upstream's requestState inside the gateway's sealed one.
func (u *upstream) relayInput(req *server.Request, r *mcp.InputRequiredResult) error {
	return u.relayInputFor(req, r, "")
}

// relayInputFor relays the input requests of a call, or of upstream task
// task when it is set.
func (u *upstream) relayInputFor(req *server.Request, r *mcp.InputRequiredResult, task string) error {
	in := server.NeedInput()
	keys := slices.Sorted(maps.Keys(r.InputRequests))
	for _, k := range keys {
		if err := addInput(in, k, r.InputRequests[k]); err != nil {
			return err
		}
	}
	// Checked here too: a task's input requests (awaitTask) reach the
	// client through tasks/get, with no check of the server's own.
	if err := req.Require(in.Needed()); err != nil {
		return err
	}
	b, err := json.Marshal(roundState{Upstream: u.cfg.Name, State: r.RequestState, Keys: keys, Task: task})
	if err != nil {
		return err
	}
	return in.State(string(b))
}

// addInput adds one input request, decoded, to in.
func addInput(in *server.Input, key string, r mcp.InputRequest) error {
	params, err := askParams(r.Method, r.Params)
	if err != nil {
		return fmt.Errorf("gateway: the upstream's input request %q: %w", key, err)
	}
	putInput(in, key, params)
	return nil
}

// askParams decodes the params of an input request (nil for roots/list).
func askParams(method string, raw jsontext.Value) (any, error) {
	switch method {
	case mcp.MethodElicitationCreate:
		var p mcp.ElicitParams
		return &p, json.Unmarshal(raw, &p)
	case mcp.MethodSamplingCreateMessage:
		var p mcp.CreateMessageParams
		return &p, json.Unmarshal(raw, &p)
	case mcp.MethodRootsList:
		return nil, nil
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

// putInput adds an input request with decoded params (nil: roots/list).
func putInput(in *server.Input, key string, params any) {
	switch p := params.(type) {
	case *mcp.ElicitParams:
		in.Elicit(key, p)
	case *mcp.CreateMessageParams:
		in.CreateMessage(key, p)
	default:
		in.ListRoots(key)
	}
}

// upstreamError is how an upstream's failure reaches the client: its
// JSON-RPC errors as they are (code, message, data), anything else as
// -32603 naming the cause.
func upstreamError(err error) error {
	var ie *IdentityError
	if errors.As(err, &ie) {
		return ie.rpc()
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	var ut *upstreamTask
	if errors.As(err, &ut) {
		return ut
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return jsonrpc.NewError(mcp.CodeInternalError, "Internal error: "+err.Error())
}

// bridged is what of a client's capabilities the gateway passes to a 2026
// upstream with each request: the input requests it bridges (elicitation,
// sampling, roots) and the extensions that pass through unchanged.
func bridged(c mcp.ClientCapabilities) mcp.ClientCapabilities {
	out := mcp.ClientCapabilities{Elicitation: c.Elicitation, Sampling: c.Sampling, Roots: c.Roots}
	if v, ok := c.Extensions[appsExtension]; ok {
		out.Extensions = map[string]jsontext.Value{appsExtension: v}
	}
	return out
}
