package server

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Input is a handler's request for input (Multi Round-Trip Requests,
// SEP-2322): keyed elicitation, sampling and roots requests, and an
// opaque state for the retry. A tools/call, prompts/get or resources/read
// handler returns it as its error:
//
//	answer, ok, err := req.ElicitResult("user_name")
//	if err != nil {
//		return nil, err
//	}
//	if !ok {
//		return nil, server.NeedInput().Elicit("user_name", &mcp.ElicitParams{...})
//	}
//
// On a 2026-07-28 request the client receives an input-required result
// and retries with the answers; on a legacy session the server asks the
// client itself, with real requests tied to the original one, and runs
// the handler again with the answers (the legacy shim). Either way the
// handler reads the answers through its Request on the next run. For a
// form inferred from a Go struct and its answer decoded into one, [Ask]
// does all of this in one call.
//
// The zero value and NeedInput() are ready to use; the builder methods
// record the first mistake (an empty or repeated key, params that do not
// encode), which fails the request with -32603 before the client is
// contacted.
type Input struct {
	keys     []string // insertion order: the shim asks in this order
	requests mcp.InputRequests
	forms    map[string]jsontext.Value // elicitation key → requestedSchema, or urlForm
	state    string
	hasState bool
	err      error
}

// NeedInput starts an Input.
func NeedInput() *Input { return &Input{} }

// Error makes *Input an error, so that handlers can return it.
func (in *Input) Error() string {
	if in.err != nil {
		return "server: invalid input request: " + in.err.Error()
	}
	return fmt.Sprintf("server: input required (%s)", strings.Join(in.keys, ", "))
}

func (in *Input) add(key, method string, params any) *Input {
	if in.err != nil {
		return in
	}
	if key == "" {
		in.err = errors.New("empty input request key")
		return in
	}
	if _, dup := in.requests[key]; dup {
		in.err = fmt.Errorf("input request key %q used twice", key)
		return in
	}
	r, err := mcp.NewInputRequest(method, params)
	if err != nil {
		in.err = fmt.Errorf("input request %q: %w", key, err)
		return in
	}
	if r.Params != nil && r.Params.Kind() != '{' {
		// A nil *ElicitParams or *CreateMessageParams encodes as null.
		in.err = fmt.Errorf("input request %q: params must be an object, not %s", key, r.Params)
		return in
	}
	if in.requests == nil {
		in.requests = make(mcp.InputRequests)
	}
	in.requests[key] = r
	in.keys = append(in.keys, key)
	return in
}

// Elicit asks the user, in form or URL mode. The answer's content is
// checked against p.RequestedSchema before the handler sees it; a schema
// that does not compile is a mistake like an empty key.
func (in *Input) Elicit(key string, p *mcp.ElicitParams) *Input {
	in.add(key, mcp.MethodElicitationCreate, p)
	if in.err != nil || p == nil {
		return in
	}
	form := formOf(p.Mode, p.RequestedSchema)
	if form == nil {
		return in
	}
	if err := checkForm(form); err != nil {
		in.err = fmt.Errorf("input request %q: %w", key, err)
		return in
	}
	if in.forms == nil {
		in.forms = make(map[string]jsontext.Value, 1)
	}
	in.forms[key] = form
	return in
}

// ElicitForm asks the user, with message, to fill in the form schema (a
// typed requestedSchema): Elicit without mcp.ElicitationSchema.Raw's
// error to handle, as a schema that does not encode (a Default that is
// not JSON) is recorded like any other builder mistake. For a form
// inferred from a Go struct, see [Ask] and [FormFor].
func (in *Input) ElicitForm(key, message string, schema mcp.ElicitationSchema) *Input {
	if in.err != nil {
		return in
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		in.err = fmt.Errorf("input request %q: requestedSchema: %w", key, err)
		return in
	}
	return in.Elicit(key, &mcp.ElicitParams{Message: message, RequestedSchema: raw})
}

// CreateMessage asks the client to sample its model.
func (in *Input) CreateMessage(key string, p *mcp.CreateMessageParams) *Input {
	return in.add(key, mcp.MethodSamplingCreateMessage, p)
}

// ListRoots asks for the client's roots.
func (in *Input) ListRoots(key string) *Input {
	return in.add(key, mcp.MethodRootsList, nil)
}

// State sets the opaque state the handler gets back on the retry
// (Request.RequestState). On the 2026 wire it is sealed — encrypted and
// authenticated, bound to this request's method, target and arguments,
// with an expiry — so the client can neither read nor alter it. A State
// alone, with no requests, asks the client to simply retry (load
// shedding, progress across rounds).
func (in *Input) State(state string) *Input {
	in.state, in.hasState = state, true
	return in
}

// validate applies SEP-2322's rules to an Input before anything is sent.
func (in *Input) validate() error {
	if in.err != nil {
		return in.err
	}
	if len(in.requests) == 0 && !in.hasState {
		return errors.New("an input-required answer needs at least one input request or a state")
	}
	return nil
}

// asInput reports whether err is a handler's *Input.
func asInput(err error) (*Input, bool) {
	if err == nil {
		return nil, false // most calls: no allocation for errors.As's target
	}
	var in *Input
	return in, errors.As(err, &in)
}

// Needed returns the client capabilities the requests of in need: the
// elicitation modes, sampling (with tools, with context) and roots. The
// server checks them (Request.Require) before any request of in reaches
// the client; a handler that must know earlier — before it commits to
// asking — calls req.Require(in.Needed()) itself.
func (in *Input) Needed() mcp.ClientCapabilities {
	var need mcp.ClientCapabilities
	for _, r := range in.requests {
		switch r.Method {
		case mcp.MethodElicitationCreate:
			var p struct {
				Mode string `json:"mode"`
			}
			_ = r.DecodeParams(&p)
			if need.Elicitation == nil {
				need.Elicitation = &mcp.ElicitationCapability{}
			}
			if p.Mode == mcp.ElicitModeURL {
				need.Elicitation.URL = &struct{}{}
			} else {
				need.Elicitation.Form = &mcp.FormElicitationCapability{}
			}
		case mcp.MethodSamplingCreateMessage:
			var p struct {
				Tools          jsontext.Value `json:"tools"`
				ToolChoice     jsontext.Value `json:"toolChoice"`
				IncludeContext string         `json:"includeContext"`
			}
			_ = r.DecodeParams(&p)
			if need.Sampling == nil {
				need.Sampling = &mcp.SamplingCapability{}
			}
			if p.Tools != nil || p.ToolChoice != nil {
				need.Sampling.Tools = &struct{}{}
			}
			if p.IncludeContext != "" && p.IncludeContext != "none" {
				need.Sampling.Context = &struct{}{}
			}
		case mcp.MethodRootsList:
			need.Roots = &mcp.RootsCapability{}
		}
	}
	return need
}

// keptAnswers returns the answers a request has so far — this round's
// and those kept from earlier rounds — that the next round does not ask
// again (nil when there are none): they travel to the next run, sealed
// in the requestState on the 2026 wire, in memory in the legacy shim and
// in a task's run, so that [Ask] and the typed accessors of a handler
// that asks one question after another find every earlier answer. They
// are not this round's answers: InputResponses does not show them.
func keptAnswers(r *Request, next *Input) mcp.InputResponses {
	var earlier mcp.InputResponses
	if r.call != nil {
		earlier = r.call.kept
	}
	var kept mcp.InputResponses
	for _, from := range [2]mcp.InputResponses{earlier, r.inputs} { // this round's last: it wins
		for k, v := range from {
			if _, again := next.requests[k]; again {
				continue
			}
			if kept == nil {
				kept = make(mcp.InputResponses, len(earlier)+len(r.inputs))
			}
			kept[k] = v
		}
	}
	return kept
}

// setKept records on r the answers kept from earlier rounds (r.call
// holds them; a request without one has no rounds).
func (r *Request) setKept(kept mcp.InputResponses) {
	if r.call != nil {
		r.call.kept = kept
	} else if kept != nil {
		r.call = &mrtrCall{kept: kept}
	}
}

// lookupAnswer returns the answer under key: this round's, else one kept
// from an earlier round.
func (r *Request) lookupAnswer(key string) (jsontext.Value, bool) {
	if raw, ok := r.inputs[key]; ok {
		return raw, true
	}
	if r.call != nil {
		raw, ok := r.call.kept[key]
		return raw, ok
	}
	return nil, false
}

// Answers so far, on the Request.

// InputResponses returns this round's answers, by key, as raw JSON: the
// answers to the input requests of the previous round only (nil on a
// first run), as SEP-2322 sends them. A handler that keeps earlier
// answers itself carries them in its State. The answers of rounds before
// that are not here, but [Ask], ElicitResult, CreateMessageResult and
// ListRootsResult still find them (the server keeps every answer a later
// round did not ask again), so that a handler that asks one question
// after another gets each answer once given.
func (r *Request) InputResponses() mcp.InputResponses { return r.inputs }

// RequestState returns the state the handler set with Input.State in the
// previous round, verified and unsealed ("" when there is none).
func (r *Request) RequestState() string { return r.state }

// ElicitResult returns the answer to the elicitation asked under key, in
// this round or an earlier one (the latest when asked more than once):
// ok is false when there is none (ask for it).
func (r *Request) ElicitResult(key string) (*mcp.ElicitResult, bool, error) {
	var v mcp.ElicitResult
	return answer(r, key, &v)
}

// CreateMessageResult returns the answer to the sampling request asked under key.
func (r *Request) CreateMessageResult(key string) (*mcp.CreateMessageResult, bool, error) {
	var v mcp.CreateMessageResult
	return answer(r, key, &v)
}

// ListRootsResult returns the answer to the roots request asked under key.
func (r *Request) ListRootsResult(key string) (*mcp.ListRootsResult, bool, error) {
	var v mcp.ListRootsResult
	return answer(r, key, &v)
}

func answer[T any](r *Request, key string, v *T) (*T, bool, error) {
	raw, ok := r.lookupAnswer(key)
	if !ok {
		return nil, false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, false, jsonrpc.Errorf(mcp.CodeInvalidParams, "Invalid params: inputResponses[%q]: %v", key, err)
	}
	return v, true, nil
}

// isRetry reports whether the request answers an earlier input-required
// result (it carried answers or a sealed state).
func (r *Request) isRetry() bool { return r.retry }

// asked maps each key in asks for to its method: what an answer to the
// key must be a result of.
func (in *Input) asked() map[string]string {
	m := make(map[string]string, len(in.requests))
	for k, r := range in.requests {
		m[k] = r.Method
	}
	return m
}
