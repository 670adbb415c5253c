package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

const (
	// DefaultShimRounds caps how many rounds of input the legacy shim
	// collects for one request before giving up (SEP-2322 leaves the bound
	// to the server; docs/design/mrtr.md).
	DefaultShimRounds = 8
	// DefaultShimLegTimeout bounds each server→client request the shim
	// sends when Options.CallTimeout is zero: a human may be answering.
	DefaultShimLegTimeout = 10 * time.Minute
	// codeRequestTimeout is the code of a shim leg that timed out.
	codeRequestTimeout = -32001
)

// mrtrCall is what binds a sealed requestState to its request: the
// method, its target (tool or prompt name, resource URI) and arguments.
type mrtrCall struct {
	method, target string
	args           jsontext.Value
	// upfront holds a 2026 request's answers sent without a
	// requestState, shape-checked, until the handler has asked for them
	// (Server.upfront).
	upfront mcp.InputResponses
	// kept holds the answers of rounds before the last that it did not
	// ask again (keptAnswers): Ask and the typed accessors read them,
	// InputResponses does not.
	kept mcp.InputResponses
}

// prepareInput runs before an MRTR method's handler: it binds the
// request to its call and lets the era check the answers the client sent
// (era.openInput: on the 2026 wire, the sealed requestState and the
// answers against it; on legacy requests, nothing — only the in-process
// shim supplies answers). A run whose answers were set in process
// (preset) does not read the wire's again.
func (s *Server) prepareInput(ctx context.Context, req *Request, call mrtrCall, responses mcp.InputResponses, state string) error {
	if req.call != nil {
		call.kept = req.call.kept // a run again in process: the earlier rounds stay
	}
	req.call = &call
	if req.preset {
		return nil
	}
	return req.era().openInput(ctx, s, req, responses, state)
}

// upfront serves a 2026 request that carried answers without a
// requestState (a client answering before it was asked; the
// conformance suite expects them used) once its handler, run without
// answers, has asked (in): the answers to its keys are checked against
// those questions — method and form, as a sealed state would have them
// (-32602, and the handler never sees them) — the others are dropped,
// and the handler runs again with them and its own state, in process.
// Without an answer to any question the client gets the input-required
// result, as on a first call.
func (s *Server) upfront(ctx context.Context, req *Request, m method, params *wireParams, in *Input) (any, error) {
	got := req.call.upfront
	req.call.upfront = nil
	inputs, err := checkAnswers(got, in.asked(), in.forms)
	if err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		return s.inputRequired(ctx, req, in)
	}
	req.inputs, req.state, req.preset = inputs, in.state, true
	req.newRun()
	res, err := m.handle(ctx, s, req, params)
	next, again := asInput(err)
	if !again {
		return res, err
	}
	if verr := next.validate(); verr != nil {
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %v", verr)
	}
	return s.inputRequired(ctx, req, next)
}

// inputRequired turns a handler's Input into the 2026 wire answer: the
// capability gate against this request's clientCapabilities (-32021),
// then an input-required result with a sealed requestState that carries
// the handler's state, the kinds of the keys asked and the forms of the
// elicitations, so that the retry's answers are checked against them.
func (s *Server) inputRequired(ctx context.Context, req *Request, in *Input) (any, error) {
	if err := req.Require(in.Needed()); err != nil {
		return nil, err
	}
	st := &sealedState{Method: req.call.method, Target: req.call.target, Digest: argsDigest(req.call.args), State: in.state, Principal: principalFrom(ctx)}
	if len(in.requests) > 0 {
		st.Asked, st.Forms = in.asked(), in.forms
	}
	st.Kept = keptAnswers(req, in)
	if last, ok := req.sentProgress(); ok {
		st.Progress = &last
	}
	token, err := s.sealer.seal(st)
	if err != nil {
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: sealing the request state: %v", err)
	}
	return &mcp.InputRequiredResult{ResultType: mcp.ResultInputRequired, InputRequests: in.requests, RequestState: token}, nil
}

// shim fulfils a handler's Input on a legacy session (SEP-2322, legacy
// sessions; docs/design/mrtr.md): each round, check the session's capabilities before contacting
// the client, send every input request as a real server→client request
// tied to the original one (SEP-2260: on HTTP it rides the original
// POST's stream), then run the handler again with this round's answers
// and its raw state. Legs go one at a time, in the order the handler
// added them: a person answers one question at a time, and a failure
// stops the round before anything else is asked.
func (s *Server) shim(ctx context.Context, req *Request, m method, params *wireParams, in *Input) (any, error) {
	if req.session == nil || s.opts.DisableLegacyShim {
		return nil, jsonrpc.NewError(mcp.CodeInternalError, "Internal error: input_required results require the 2026-07-28 stateless lifecycle (SEP-2322); this legacy request has no session to ask the client through")
	}
	rounds := s.opts.ShimRounds
	if rounds <= 0 {
		rounds = DefaultShimRounds
	}
	for round := 1; ; round++ {
		if err := req.Require(in.Needed()); err != nil {
			return nil, err
		}
		if req.ic != nil {
			req.ic.round = round
		}
		kept := keptAnswers(req, in)
		var answers mcp.InputResponses
		if len(in.keys) > 0 {
			answers = make(mcp.InputResponses, len(in.keys))
		}
		for _, key := range in.keys {
			raw, err := s.leg(ctx, req, in.requests[key], in.forms[key])
			if err != nil {
				return nil, err
			}
			answers[key] = raw
		}
		req.inputs, req.state = answers, ""
		req.setKept(kept)
		if in.hasState {
			req.state = in.state
		}
		req.newRun()
		res, err := m.handle(ctx, s, req, params)
		next, again := asInput(err)
		if !again {
			return res, err
		}
		if verr := next.validate(); verr != nil {
			return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %v", verr)
		}
		if round >= rounds {
			return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: the handler still returned input_required after %d legacy shim rounds (SEP-2322)", rounds)
		}
		in = next
	}
}

// leg sends one input request to the client and returns its raw answer,
// checked as the 2026 wire checks inputResponses: a result of the wrong
// shape, or content that does not match form (the requestedSchema that
// Input.Elicit recorded and checked, or urlForm), fails the original
// request with -32602 and the handler does not run.
func (s *Server) leg(ctx context.Context, req *Request, ir mcp.InputRequest, form jsontext.Value) (jsontext.Value, error) {
	params := ir.Params
	if ir.Method == mcp.MethodElicitationCreate {
		params = withElicitationID(params)
	}
	legCtx := ctx
	if s.opts.CallTimeout == 0 {
		var cancel context.CancelFunc
		legCtx, cancel = context.WithTimeout(ctx, DefaultShimLegTimeout)
		defer cancel()
	}
	var raw jsontext.Value
	var p any
	if params != nil {
		p = params
	}
	err := req.out.Call(legCtx, req.id, ir.Method, p, &raw)
	switch {
	case err == nil:
		if bad := checkAnswer(ir.Method, form, raw); bad != nil {
			return nil, legAnswerError(ir.Method, bad)
		}
		return raw, nil
	case ctx.Err() != nil:
		return nil, ctx.Err() // the original request was cancelled: no answer
	case errors.Is(err, context.DeadlineExceeded):
		return nil, jsonrpc.Errorf(codeRequestTimeout, "Request timed out: the client did not answer %s", ir.Method)
	}
	if e, ok := jsonrpc.AsError(err); ok {
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: the client answered %s with error %d: %s", ir.Method, e.Code, e.Message)
	}
	return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: %s to the client failed: %v", ir.Method, err)
}

// withElicitationID gives a URL-mode elicitation without an id a fresh
// one (2025-11-25 requires it); a handler's own id is kept.
func withElicitationID(params jsontext.Value) jsontext.Value {
	var p map[string]jsontext.Value
	if json.Unmarshal(params, &p) != nil {
		return params
	}
	var mode string
	_ = json.Unmarshal(p["mode"], &mode)
	if mode != mcp.ElicitModeURL || p["elicitationId"] != nil {
		return params
	}
	id, _ := json.Marshal(newUUID())
	p["elicitationId"] = id
	out, err := json.Marshal(p, json.Deterministic(true))
	if err != nil {
		return params
	}
	return out
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

type principalKey struct{}

// WithPrincipal returns a context that names the authenticated principal
// of a request; sealed request state is bound to it, so another principal
// cannot replay it. Authentication middleware sets it.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

func principalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}
