package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/revisions"
	"github.com/mcpkit/mcpkit/mcp"
)

// Multi Round-Trip Requests (SEP-2322), the client's half: the driver
// that answers a modern server's input-required results.
//
// A 2026-07-28 server that needs something from the client while it
// handles tools/call, prompts/get or resources/read answers with an
// input-required result: keyed input requests (elicitation/create,
// sampling/createMessage, roots/list) and/or an opaque requestState. The
// driver answers every input request with the handlers of Options — the
// same ones that answer a legacy server's elicitation, sampling and roots
// requests — and repeats the call as a new request (a new JSON-RPC id, a
// fresh envelope, the original params unchanged) carrying this round's
// answers as inputResponses and the requestState exactly as received,
// until the server answers with a final result or an error.

// DefaultMaxInputRounds is the default of Options.MaxInputRounds: how many
// times the driver repeats one call before it gives up.
const DefaultMaxInputRounds = 10

// The pace of retries that answer a requestState-only result (the server
// shedding load or reporting progress): 50 ms, doubling up to 250 ms; a
// round with input requests starts over at 50 ms.
const (
	shedBackoffMin = 50 * time.Millisecond
	shedBackoffMax = 250 * time.Millisecond
)

var (
	// ErrNoInputHandler is wrapped by the *InputRequiredError of a call
	// whose server asked for input this client cannot give: no handler is
	// registered for the input request's method, or it needs a mode or
	// feature the client did not declare (URL-mode elicitation without
	// Options.ElicitationURL, sampling with tools without
	// Options.SamplingTools). Nothing was asked and nothing was sent.
	ErrNoInputHandler = errors.New("client: no handler for the server's input request")
	// ErrTooManyInputRounds is wrapped by the *InputRequiredError of a call
	// that was still input-required after Options.MaxInputRounds retries.
	ErrTooManyInputRounds = errors.New("client: too many input-required rounds")
)

// InputRequiredError is returned by a call to a modern server that
// answered with an input-required result (SEP-2322, multi round-trip
// requests) the client did not answer itself:
//
//   - Options.ManualInput is set, or no input handler (Elicitation,
//     Sampling, Roots) is registered: the manual path. Answer
//     Result.InputRequests yourself and repeat the call with
//     InputResponses and RequestState (Result.RequestState, unchanged) set
//     in its params; they are sent as top-level params members, and the
//     driver (when on) takes over from that answer.
//   - an input request has no handler (errors.Is(err, ErrNoInputHandler);
//     Key names it);
//   - the call was still input-required after Options.MaxInputRounds
//     retries (errors.Is(err, ErrTooManyInputRounds));
//   - a method other than tools/call, prompts/get and resources/read
//     answered input_required, which it may not (errors.Is(err,
//     ErrResultType)).
type InputRequiredError struct {
	// Method is the request that was answered.
	Method string
	// Result is the last input-required result, decoded: its
	// InputRequests and RequestState.
	Result *mcp.InputRequiredResult
	// Raw is that result exactly as received.
	Raw jsontext.Value
	// Key is the input request the client has no handler for (with
	// ErrNoInputHandler), else "".
	Key string
	// Rounds is how many times the driver had repeated the call.
	Rounds int
	// TaskID is set when the input requests are a task's (its tasks/get
	// answered input_required, on a 2026-07-28 connection; Method is then
	// tasks/get): answer them with UpdateTask, then wait for the task
	// again (TaskResult). The task waits meanwhile.
	TaskID string

	err    error          // ErrNoInputHandler, ErrTooManyInputRounds, ErrResultType or nil
	detail string         // why, for Error
	order  []string       // the keys of Result.InputRequests in the server's order
	state  jsontext.Value // the requestState member as received (nil: absent)
}

func (e *InputRequiredError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "client: %s: ", e.Method)
	if e.TaskID != "" {
		fmt.Fprintf(&b, "task %s: ", e.TaskID)
	}
	switch {
	case e.detail != "":
		b.WriteString(e.detail)
	default:
		b.WriteString("the server requires input from the client (resultType input_required")
		if e.Result != nil {
			for i, key := range e.order {
				if i == 0 {
					b.WriteString(": ")
				} else {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%q %s", key, e.Result.InputRequests[key].Method)
			}
			if e.Result.RequestState != "" || e.state != nil {
				b.WriteString(", with a requestState")
			}
		}
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns ErrNoInputHandler, ErrTooManyInputRounds, ErrResultType
// or nil: why the client stopped.
func (e *InputRequiredError) Unwrap() error { return e.err }

// inputRequired decodes an input_required result of method.
func inputRequired(method string, raw jsontext.Value) error {
	ir := &InputRequiredError{Method: method, Raw: raw, Result: new(mcp.InputRequiredResult)}
	if err := json.Unmarshal(raw, ir.Result); err != nil {
		return fmt.Errorf("client: %s: decoding the input_required result: %w", method, err)
	}
	var w struct {
		InputRequests jsontext.Value `json:"inputRequests"`
		RequestState  jsontext.Value `json:"requestState"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return fmt.Errorf("client: %s: decoding the input_required result: %w", method, err)
	}
	if w.RequestState.Kind() == '"' {
		ir.state = w.RequestState // echoed byte for byte, never re-encoded
	}
	ir.order = keyOrder(w.InputRequests)
	if !revisions.IsMRTRMethod(method) {
		ir.err = ErrResultType
		ir.detail = "input_required is not a valid result of this method (only tools/call, prompts/get and resources/read may ask for input)"
	}
	return ir
}

// keyOrder returns the member names of a JSON object in the order they
// were written (nil when raw is not an object).
func keyOrder(raw jsontext.Value) []string {
	if raw.Kind() != '{' {
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.ReadToken(); err != nil {
		return nil
	}
	var keys []string
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return keys
		}
		keys = append(keys, tok.String())
		if err := dec.SkipValue(); err != nil {
			return keys
		}
	}
	return keys
}

// driving reports whether the driver answers input-required results:
// unless Options.ManualInput, when at least one input handler is
// registered.
func (c *Client) driving() bool {
	return !c.opts.ManualInput && c.handlers().any()
}

func (c *Client) maxInputRounds() int {
	if c.opts.MaxInputRounds > 0 {
		return c.opts.MaxInputRounds
	}
	return DefaultMaxInputRounds
}

// drive is the MRTR loop (reference C3), from the first leg's
// input-required answer ir: answer, retry, until a final answer. params
// is the call's params (never changed); callerMeta its _meta before the
// envelope. It returns how many retries it sent.
func (c *Client) drive(ctx context.Context, method string, params any, callerMeta mcp.Meta, result any, ir *InputRequiredError, sent func(mcp.ID)) (int, error) {
	// The original params without the caller's own inputResponses and
	// requestState (a manual retry the server answered with another
	// round): each retry carries only the latest round's.
	base, meta := withoutInput(params)
	if base == nil {
		return 0, ir
	}
	limit := c.maxInputRounds()
	backoff := shedBackoffMin
	for rounds := 1; ; rounds++ {
		if rounds > limit {
			ir.Rounds, ir.err = rounds-1, ErrTooManyInputRounds
			ir.detail = fmt.Sprintf("the server still requires input after %d rounds (Options.MaxInputRounds is %d)", limit, limit)
			return rounds - 1, ir
		}
		var responses mcp.InputResponses
		if len(ir.Result.InputRequests) == 0 {
			if ir.state == nil {
				return rounds - 1, fmt.Errorf("client: %s: invalid input_required result: neither inputRequests nor requestState", method)
			}
			// Load shedding: nothing to answer; come back a little later.
			c.log.Debug("client: input_required without input requests; retrying", "method", method, "after", backoff)
			if err := sleep(ctx, backoff); err != nil {
				return rounds - 1, err
			}
			backoff = min(2*backoff, shedBackoffMax)
		} else {
			backoff = shedBackoffMin
			var err error
			if responses, err = c.fulfil(ctx, ir, rounds); err != nil {
				if nh, ok := err.(*InputRequiredError); ok {
					nh.Rounds = rounds - 1
				}
				return rounds - 1, err
			}
		}
		*meta = callerMeta
		err := c.leg(ctx, method, &retryParams{round: rounds, base: base, responses: responses, state: ir.state}, meta, result, sent)
		next, ok := err.(*InputRequiredError)
		if !ok {
			return rounds, err
		}
		ir = next
	}
}

// fulfil answers every input request of ir, one at a time, in the order
// the server listed them, with the registered handlers. Every request is
// checked before any handler runs, so that nobody is asked a question
// whose answer could not be sent.
func (c *Client) fulfil(ctx context.Context, ir *InputRequiredError, round int) (mcp.InputResponses, error) {
	order := ir.order
	if len(order) != len(ir.Result.InputRequests) { // cannot happen: the decoder rejects duplicate names
		order = nil
		for key := range ir.Result.InputRequests {
			order = append(order, key)
		}
	}
	type todo struct {
		key    string
		method string
		params any
	}
	var work []todo
	hs := c.handlers()
	for _, key := range order {
		r := ir.Result.InputRequests[key]
		var params any
		why := ""
		switch r.Method {
		case mcp.MethodElicitationCreate:
			p := new(mcp.ElicitParams)
			if err := r.DecodeParams(p); err != nil {
				return nil, fmt.Errorf("client: %s: input request %q: invalid elicitation/create params: %w", ir.Method, key, err)
			}
			switch {
			case hs.elicit == nil:
				why = "no ElicitHandler"
			case !c.canElicit(p):
				why = "URL-mode elicitation, which this client did not declare (Options.ElicitationURL)"
			}
			params = p
		case mcp.MethodSamplingCreateMessage:
			p := new(mcp.CreateMessageParams)
			if err := r.DecodeParams(p); err != nil {
				return nil, fmt.Errorf("client: %s: input request %q: invalid sampling/createMessage params: %w", ir.Method, key, err)
			}
			switch {
			case hs.sample == nil:
				why = "no CreateMessageHandler"
			case !c.canSample(p):
				why = "sampling with tools, which this client did not declare (Options.SamplingTools)"
			}
			params = p
		case mcp.MethodRootsList:
			if hs.roots == nil {
				why = "no ListRootsHandler"
			}
		default:
			why = "not a method a server may ask a client for"
		}
		if why != "" {
			return nil, &InputRequiredError{
				Method: ir.Method, Result: ir.Result, Raw: ir.Raw, Key: key,
				err:    ErrNoInputHandler,
				detail: fmt.Sprintf("the server requires input the client cannot give: input request %q is %s: %s", key, r.Method, why),
				order:  ir.order, state: ir.state,
			}
		}
		work = append(work, todo{key, r.Method, params})
	}
	responses := make(mcp.InputResponses, len(work))
	for _, w := range work {
		raw := ir.Result.InputRequests[w.key].Params
		res, err := c.inbound(ctx, w.method, raw, false, round, func(ctx context.Context, method string, got jsontext.Value) (any, error) {
			return c.answerInput(ctx, method, w.params, raw, got)
		})
		if err != nil {
			return nil, fmt.Errorf("client: %s: answering input request %q (%s): %w", ir.Method, w.key, w.method, err)
		}
		if err := responses.Set(w.key, res); err != nil {
			return nil, fmt.Errorf("client: %s: encoding the answer to input request %q: %w", ir.Method, w.key, err)
		}
	}
	return responses, nil
}

// answerInput answers one input request of an input-required result
// with the registered handlers (at the end of the interceptors): params
// are the checked params of raw; an interceptor that changed them (got)
// has them decoded again.
func (c *Client) answerInput(ctx context.Context, method string, params any, raw, got jsontext.Value) (any, error) {
	if method != mcp.MethodRootsList && (len(got) != len(raw) || !bytes.Equal(got, raw)) {
		switch method {
		case mcp.MethodElicitationCreate:
			params = new(mcp.ElicitParams)
		case mcp.MethodSamplingCreateMessage:
			params = new(mcp.CreateMessageParams)
		}
		if err := decode(got, params); err != nil {
			return nil, err
		}
	}
	switch p := params.(type) {
	case *mcp.ElicitParams:
		return c.elicit(ctx, p)
	case *mcp.CreateMessageParams:
		return c.sample(ctx, p)
	}
	if method == mcp.MethodRootsList {
		return c.listRoots(ctx)
	}
	return nil, fmt.Errorf("client: an interceptor changed input request %s into one this client cannot answer", method)
}

// withoutInput returns a copy of MRTR params without inputResponses and
// requestState, and its _meta; nil for other params.
func withoutInput(params any) (any, *mcp.Meta) {
	switch p := params.(type) {
	case *mcp.CallToolParams:
		cp := *p
		cp.InputResponses, cp.RequestState = nil, ""
		return &cp, &cp.Meta
	case *mcp.GetPromptParams:
		cp := *p
		cp.InputResponses, cp.RequestState = nil, ""
		return &cp, &cp.Meta
	case *mcp.ReadResourceParams:
		cp := *p
		cp.InputResponses, cp.RequestState = nil, ""
		return &cp, &cp.Meta
	}
	return nil, nil
}

// retryParams are the params of a retry: the original params (their
// _meta set by the leg), then this round's answers and the requestState
// token exactly as the server wrote it.
type retryParams struct {
	round     int // the driver's repetition (intercept.Call.Round)
	base      any
	responses mcp.InputResponses // nil: none this round (omitted)
	state     jsontext.Value     // nil: the server sent none (omitted)
}

// encode writes the params by hand so that the requestState bytes are
// the server's own: an encoder would re-escape the string.
func (r *retryParams) encode() (jsontext.Value, error) {
	b, err := json.Marshal(r.base)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("client: params encode as %s, not an object", b)
	}
	b = b[:len(b)-1]
	member := func(name string, v []byte) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, name...)
		b = append(b, v...)
	}
	if len(r.responses) > 0 {
		raw, err := json.Marshal(r.responses)
		if err != nil {
			return nil, err
		}
		member(`"inputResponses":`, raw)
	}
	if r.state != nil {
		member(`"requestState":`, r.state)
	}
	return append(b, '}'), nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
