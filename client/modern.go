package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

var (
	// ErrLegacy is returned by methods that exist only in the modern era
	// (Listen, Discover) on a legacy connection.
	ErrLegacy = errors.New("client: not available on a legacy (initialize) connection")
	// ErrModern is returned by methods whose request the modern era
	// removed (Ping, Subscribe, Unsubscribe, RootsChanged) on a modern
	// connection. Listen replaces resources/subscribe; SetLoggingLevel
	// sets the per-request level instead of sending logging/setLevel.
	ErrModern = errors.New("client: not part of the 2026-07-28 protocol (modern connection)")
	// ErrResultType is returned when a modern result has a resultType this
	// client does not know (a result it must treat as invalid).
	ErrResultType = errors.New("client: unknown resultType")
)

// prepareModern encodes what every modern request carries. The
// capabilities are those of initialize, in their 2026-07-28 form (roots
// without listChanged, which that revision removed).
func (c *Client) prepareModern() error {
	if err := c.encodeCaps(); err != nil {
		return err
	}
	var err error
	if c.infoJSON, err = json.Marshal(c.opts.Info); err != nil {
		return fmt.Errorf("client: encoding Options.Info: %w", err)
	}
	c.resultOpts = json.WithUnmarshalers(json.UnmarshalFromFunc(c.decodeResultMeta))
	c.resultMetaFn = c.resultMeta
	switch {
	case c.opts.NoCache:
	case c.opts.Cache != nil:
		c.cache = c.opts.Cache
	default:
		c.cache = NewCache(nil)
	}
	return nil
}

// encodeCaps encodes c.caps for modern requests (with mu held once the
// client runs: the Set…Handler methods change them).
func (c *Client) encodeCaps() error {
	plain, tasks, err := envelopeCaps(c.caps)
	if err != nil {
		return fmt.Errorf("client: encoding the client capabilities: %w", err)
	}
	c.capsJSON, c.capsTasksJSON = plain, tasks
	if c.opts.Tasks {
		c.capsJSON = c.capsTasksJSON
	}
	return nil
}

// envelopeCaps encodes capabilities as a 2026 envelope declares them
// (roots without listChanged), as they are and with the tasks extension
// added (for the requests that declare it).
func envelopeCaps(caps mcp.ClientCapabilities) (plain, tasks jsontext.Value, err error) {
	if caps.Roots != nil {
		caps.Roots = &mcp.RootsCapability{}
	}
	if plain, err = json.Marshal(caps); err != nil {
		return nil, nil, err
	}
	caps.Extensions = maps.Clone(caps.Extensions)
	if caps.Extensions == nil {
		caps.Extensions = make(map[string]jsontext.Value, 1)
	}
	caps.Extensions[tasksExtension] = jsontext.Value(`{}`)
	if tasks, err = json.Marshal(caps); err != nil {
		return nil, nil, err
	}
	return plain, tasks, nil
}

// callModern sends a modern request and, when the server answers that it
// requires input (SEP-2322) and the driver is on, answers and repeats it
// (drive). It returns how many times the request was repeated with
// answers: a result that took a retry is never cached.
func (c *Client) callModern(ctx context.Context, method string, params any, meta *mcp.Meta, result any, sent func(mcp.ID)) (int, error) {
	callerMeta := *meta
	err := c.leg(ctx, method, params, meta, result, sent)
	ir, ok := err.(*InputRequiredError)
	if !ok || ir.err != nil || !c.driving() {
		return 0, err
	}
	return c.drive(ctx, method, params, callerMeta, result, ir, sent)
}

// leg sends one modern request: the envelope goes into *meta (a copy the
// caller owns; the caller's own params are never touched), and a -32022
// answer naming a revision this client speaks is retried once in that
// revision, which later requests then use too. Options.CallTimeout bounds
// each leg, not the time the input handlers take between legs.
func (c *Client) leg(ctx context.Context, method string, params any, meta *mcp.Meta, result any, sent func(mcp.ID)) error {
	ctx, cancel := c.withTimeout(ctx, method)
	defer cancel()
	orig := *meta
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	retried := false
	tasks := c.tasksDeclared(ctx)
	for {
		env := c.newEnvelope(meta, orig, version, tasks)
		overrideCaps(ctx, &env, tasks)
		err := c.exchange(ctx, method, params, result, &env, sent)
		if err == nil || retried {
			return err
		}
		v, ok := retryVersion(err)
		if !ok {
			return err
		}
		retried = true
		c.log.Debug("client: the server refused the protocol version; retrying", "method", method, "from", version, "to", v)
		version = v
		c.mu.Lock()
		c.version = v
		c.mu.Unlock()
	}
}

// retryVersion reads a -32022 error: the revision to retry with.
func retryVersion(err error) (string, bool) {
	e, ok := jsonrpc.AsError(err)
	if !ok || e.Code != mcp.CodeUnsupportedProtocolVersion || len(e.Data) == 0 {
		return "", false
	}
	var data mcp.UnsupportedProtocolVersionData
	if json.Unmarshal(e.Data, &data) != nil {
		return "", false
	}
	return pickVersion(data.Supported)
}

// exchange sends one modern request and reads its result: resultType
// absent or "complete" is decoded into result (a pointer, nil to discard,
// or *jsontext.Value for the raw JSON); "input_required" is an
// *InputRequiredError (wrapping ErrResultType for a method that may not
// ask for input); "task", for a tools/call that declared the tasks
// extension, is a *taskStarted; anything else is ErrResultType. A
// tools/call carries the Mcp-Param-* headers of its arguments
// (callHeaders), as data for the transport.
//
// env is the request's envelope: without interceptors it is written as
// bytes ahead of the params (enveloped) and the transport is told the
// request's route; with them it goes into params._meta as a map, which
// they see. sent, when set, learns the request's id before it is written.
func (c *Client) exchange(ctx context.Context, method string, params, result any, env *outEnvelope, sent func(mcp.ID)) error {
	hs, err := c.callHeaders(method, params)
	if err != nil {
		return err
	}
	opts := jsonrpc.CallOptions{Header: hs, Sent: sent}
	if c.chain != nil {
		*env.meta = env.asMap()
	} else {
		*env.meta = nil
		defer func() { *env.meta = env.caller }()
		opts.Modern = env.route(method, params)
	}
	round := 0
	if r, ok := params.(*retryParams); ok {
		round = r.round
		p, err := r.encode()
		if err != nil {
			return fmt.Errorf("client: encoding %s params: %w", method, err)
		}
		params = p
	}
	xv := exchangeVals.Get().(*exchangeValues)
	defer func() { *xv = exchangeValues{}; exchangeVals.Put(xv) }()
	if c.chain == nil {
		p, buf, checked, err := env.encode(params)
		defer putEnvelopeBuf(buf) // jsonrpc copies the bytes while rpc writes the request
		if err != nil {
			return fmt.Errorf("client: encoding %s params: %w", method, err)
		}
		// jsonrpc sends what either points to verbatim, a Checked without
		// walking it again.
		if checked {
			xv.checked = wire.Checked(p)
			params = &xv.checked
		} else {
			xv.params = p
			params = &xv.params
		}
	}
	if err := c.rpc(ctx, method, params, &xv.raw, opts, round); err != nil {
		return err
	}
	raw := xv.raw
	if method == mcp.MethodToolsCall && c.tasksDeclared(ctx) {
		if rt, err := peekResultType(raw); err == nil && rt == mcp.ResultTask {
			return &taskStarted{raw: raw}
		}
	}
	return complete(method, raw, result, c.decodeOpts(method), c.decodeMeta(method))
}

// complete decodes a result that says it is complete into result, with
// opts; meta, the same as opts for the result's own _meta, serves the
// fast decode of a tools/call result (nil when opts is).
func complete(method string, raw jsontext.Value, result any, opts json.Options, meta func([]byte, *mcp.Meta) error) error {
	rt, err := mcp.ResultComplete, error(nil)
	if _, rawOut := result.(*jsontext.Value); result == nil || rawOut || !leadsComplete(raw) {
		rt, err = peekResultType(raw)
	}
	if err != nil {
		return fmt.Errorf("client: %s: the result is not a JSON object: %w", method, err)
	}
	switch {
	case rt.IsComplete():
	case rt == mcp.ResultInputRequired:
		return inputRequired(method, raw)
	default:
		return fmt.Errorf("%w %q in the result of %s", ErrResultType, rt, method)
	}
	switch r := result.(type) {
	case nil:
		return nil
	case *jsontext.Value:
		*r = raw
		return nil
	case *mcp.CallToolResult:
		if wire.DecodeToolResult(raw, r, meta) {
			return nil // the everyday result, without the struct decoder
		}
	}
	if opts == nil {
		err = json.Unmarshal(raw, result)
	} else {
		err = json.Unmarshal(raw, result, opts)
	}
	if err != nil {
		return fmt.Errorf("client: %s: decoding the result: %w", method, err)
	}
	return nil
}

// leadingComplete is how a result whose first member says it is complete
// begins, as servers usually write it.
const leadingComplete = `{"resultType":"` + string(mcp.ResultComplete) + `"`

// leadsComplete reports whether raw's first member is resultType
// "complete", written without whitespace or escapes: the rest of raw is
// then decoded whole into a typed result, whose decoder refuses what the
// peek would (a second resultType, invalid JSON), so the peek is spared.
func leadsComplete(raw jsontext.Value) bool {
	n := len(leadingComplete)
	return len(raw) > n && string(raw[:n]) == leadingComplete && (raw[n] == ',' || raw[n] == '}')
}

// peekResultType returns the resultType member of a raw result, or "" if
// it has none, without decoding the rest: a pooled decoder reads the
// top-level members and skips their values. A member name is matched as
// the JSON decoder matches it, escapes decoded (FuzzPeekResultType holds
// the two to the same answer).
func peekResultType(raw jsontext.Value) (mcp.ResultType, error) {
	p := peekers.Get().(*peeker)
	defer peekers.Put(p)
	p.rd.Reset(raw)
	p.dec.Reset(&p.rd)
	defer p.rd.Reset(nil)
	tok, err := p.dec.ReadToken()
	if err != nil {
		return "", err
	}
	if tok.Kind() != '{' {
		return "", fmt.Errorf("client: a %v, not an object", tok.Kind())
	}
	var rt mcp.ResultType
	for p.dec.PeekKind() != '}' {
		name, err := p.dec.ReadValue() // a value, not a Token: no string made
		if err != nil {
			return "", err
		}
		if string(name) != `"resultType"` && !escapedName(name, "resultType") {
			if err := p.dec.SkipValue(); err != nil {
				return "", err
			}
			continue
		}
		v, err := p.dec.ReadValue()
		if err != nil {
			return "", err
		}
		if v.Kind() != '"' {
			return "", fmt.Errorf("client: resultType is a %v, not a string", v.Kind())
		}
		switch string(v) {
		case `"` + string(mcp.ResultComplete) + `"`:
			rt = mcp.ResultComplete
		case `"` + string(mcp.ResultInputRequired) + `"`:
			rt = mcp.ResultInputRequired
		case `"` + string(mcp.ResultTask) + `"`:
			rt = mcp.ResultTask
		default:
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return "", err
			}
			rt = mcp.ResultType(s)
		}
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return "", err
	}
	return rt, nil
}

// exchangeValues are the slices an exchange hands to jsonrpc by pointer:
// the encoded params and the raw result. Pooled, neither is boxed nor
// moved to the heap per call; both are cleared before going back.
type exchangeValues struct {
	params, raw jsontext.Value
	checked     wire.Checked
}

var exchangeVals = sync.Pool{New: func() any { return new(exchangeValues) }}

// escapedName reports whether the quoted member name raw, which has
// escapes, means name once they are decoded: {"result\u0054ype":...} is
// the member resultType to the decoder of the whole result, so it is to
// the peek as well. A name without a backslash is compared as is by the
// caller (no allocation on that path).
func escapedName(raw jsontext.Value, name string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return false
	}
	s, err := jsontext.AppendUnquote(nil, raw)
	return err == nil && string(s) == name
}

// peeker is a pooled decoder for peekResultType.
type peeker struct {
	rd  bytes.Reader
	dec jsontext.Decoder
}

var peekers = sync.Pool{New: func() any { return new(peeker) }}
