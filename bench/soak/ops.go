package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Kind is one kind of operation of the mix.
type Kind int

// The kinds of operation. Each is verified end to end; see the README's
// Soak section for what each one does.
const (
	// Legacy is one whole 2025-11-25 session through the mcpkit client:
	// initialize (the client opens the standalone GET stream, which must
	// be established), LegacyEchoes echo calls, one confirm call whose
	// elicitation the legacy shim sends on the POST's stream and the
	// client answers, one progress call (an event stream), sometimes a
	// call cancelled mid-stream (notifications/cancelled: a slow call at
	// its first notification, or a confirm call while the shim waits for
	// the elicitation's answer) followed by one more echo, then DELETE
	// (Client.Close).
	Legacy Kind = iota
	// Modern is one 2026-07-28 tools/call of echo.
	Modern
	// SSE is one 2026-07-28 tools/call of progress: Steps notifications,
	// then the result, as an event stream.
	SSE
	// MRTR is a two-round 2026-07-28 call of confirm: input_required with
	// an elicitation and a sealed requestState, then the retry with the
	// answer and the state.
	MRTR
	// Cancel is a 2026-07-28 call of a slow progress tool whose context
	// the client cancels at the first notification (the client closes the
	// POST's stream).
	Cancel
	// Disconnect is a call sent with net/http whose connection is closed
	// mid-stream, one of three at random: a 2026-07-28 slow progress call
	// after its first notification; the same on a fresh legacy session;
	// a confirm call on a fresh legacy session once the shim's
	// elicitation/create arrived (never answered). The legacy sessions
	// are opened and deleted with raw requests.
	Disconnect
	numKinds
)

var kindNames = [numKinds]string{"legacy", "modern", "sse", "mrtr", "cancel", "disconnect"}

func (k Kind) String() string { return kindNames[k] }

// LegacyEchoes is how many echo calls a legacy session makes.
const LegacyEchoes = 3

// op is what a worker needs to run operations: the shared HTTP client and
// its own modern client.
type op struct {
	cfg    *Config
	hc     *http.Client
	modern *client.Client // 2026-07-28, ManualInput: the MRTR rounds are ours
	rng    *rand.Rand
	id     int
	seq    int
}

func (o *op) text() string {
	o.seq++
	return fmt.Sprintf("soak-%d-%d", o.id, o.seq)
}

func newModernClient(ctx context.Context, cfg *Config, hc *http.Client) (*client.Client, error) {
	t := streamable.New(cfg.URL, &streamable.Options{HTTPClient: hc})
	return client.Connect(ctx, t, &client.Options{
		Info:            mcp.Implementation{Name: "soak", Version: "1.0.0"},
		ProtocolVersion: mcp.Version20260728,
		NoCache:         true,
		ManualInput:     true,
		// Declares elicitation in every request's capabilities; with
		// ManualInput the answers are sent by mrtr itself.
		ElicitHandler: func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return nil, errors.New("not used")
		},
	})
}

// run runs one operation of kind k. It returns the number of expected
// interruptions it caused, and an error for anything unexpected.
func (o *op) run(ctx context.Context, k Kind) (int, error) {
	switch k {
	case Legacy:
		return o.legacy(ctx)
	case Modern:
		return 0, o.echo(ctx, o.modern)
	case SSE:
		return 0, o.progress(ctx, o.modern, o.cfg.Steps)
	case MRTR:
		return 0, o.mrtr(ctx)
	case Cancel:
		return o.cancel(ctx, o.modern)
	case Disconnect:
		switch o.rng.IntN(3) {
		case 0:
			return o.disconnectModern(ctx)
		case 1:
			return o.disconnectLegacy(ctx, false)
		}
		return o.disconnectLegacy(ctx, true)
	}
	return 0, fmt.Errorf("unknown kind %d", k)
}

func args(text string, steps, delayMs int) jsontext.Value {
	b, _ := json.Marshal(map[string]any{"text": text, "steps": steps, "delayMs": delayMs})
	return b
}

// checkEcho verifies a tools/call result that echoes text.
func checkEcho(res *mcp.CallToolResult, text string) error {
	if res == nil || res.IsError || !res.ResultType.IsComplete() {
		return fmt.Errorf("not a successful result: %+v", res)
	}
	var out struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.Text == nil || *out.Text != text {
		return fmt.Errorf("structuredContent %s, want the text %q (%v)", res.StructuredContent, text, err)
	}
	if len(res.Content) != 1 {
		return fmt.Errorf("%d content blocks, want 1", len(res.Content))
	}
	if b, err := json.Marshal(res.Content[0]); err != nil || !bytes.Contains(b, []byte(text)) {
		return fmt.Errorf("content %s does not carry %q", b, text)
	}
	return nil
}

func (o *op) echo(ctx context.Context, c *client.Client) error {
	text := o.text()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args(text, 0, 0)})
	if err != nil {
		return fmt.Errorf("echo: %w", err)
	}
	if err := checkEcho(res, text); err != nil {
		return fmt.Errorf("echo: %w", err)
	}
	return nil
}

// progress calls the progress tool and checks that exactly steps
// notifications arrived, in order, before the result.
func (o *op) progress(ctx context.Context, c *client.Client, steps int) error {
	text := o.text()
	var n int
	var bad atomic.Value
	pctx := client.WithProgress(ctx, func(p *mcp.ProgressParams) {
		n++ // progress runs on the client's reader, one at a time
		if p.Progress != float64(n) || p.Total == nil || *p.Total != float64(steps) {
			bad.CompareAndSwap(nil, fmt.Sprintf("notification %d: progress %v of %v", n, p.Progress, p.Total))
		}
	})
	res, err := c.CallTool(pctx, &mcp.CallToolParams{Name: "progress", Arguments: args(text, steps, 0)})
	if err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	if err := checkEcho(res, text); err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	if s, ok := bad.Load().(string); ok {
		return fmt.Errorf("progress: %s", s)
	}
	if n != steps {
		return fmt.Errorf("progress: %d notifications before the result, want %d", n, steps)
	}
	return nil
}

// cancel calls a slow progress tool and cancels the call at its first
// notification. The call must fail with the cancellation; if it
// completed first, its answer must be right.
func (o *op) cancel(ctx context.Context, c *client.Client) (int, error) {
	text := o.text()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var got atomic.Bool
	pctx := client.WithProgress(cctx, func(*mcp.ProgressParams) {
		got.Store(true)
		cancel()
	})
	res, err := c.CallTool(pctx, &mcp.CallToolParams{Name: "progress", Arguments: args(text, o.cfg.SlowSteps, o.cfg.SlowDelayMs)})
	switch {
	case err == nil:
		if err := checkEcho(res, text); err != nil {
			return 0, fmt.Errorf("cancel: completed with a wrong answer: %w", err)
		}
		return 0, nil
	case got.Load() && errors.Is(err, context.Canceled) && ctx.Err() == nil:
		return 1, nil
	}
	return 0, fmt.Errorf("cancel (progress seen: %v): %w", got.Load(), err)
}

func (o *op) mrtr(ctx context.Context) error {
	text := o.text()
	p := &mcp.CallToolParams{Name: "confirm", Arguments: args(text, 0, 0)}
	_, err := o.modern.CallTool(ctx, p)
	var ir *client.InputRequiredError
	if !errors.As(err, &ir) || ir.Result == nil {
		return fmt.Errorf("mrtr round 1: want input_required, got %v", err)
	}
	req, ok := ir.Result.InputRequests["ok"]
	if !ok || req.Method != mcp.MethodElicitationCreate || len(ir.Result.InputRequests) != 1 || ir.Result.RequestState == "" {
		return fmt.Errorf("mrtr round 1: want one elicitation \"ok\" and a requestState: %s", ir.Raw)
	}
	var ep mcp.ElicitParams
	if err := json.Unmarshal(req.Params, &ep); err != nil || ep.Message != "Echo "+text+"?" {
		return fmt.Errorf("mrtr round 1: elicitation %s (%v)", req.Params, err)
	}
	if strings.Contains(ir.Result.RequestState, "soak:") {
		return fmt.Errorf("mrtr round 1: the requestState is not sealed: %q", ir.Result.RequestState)
	}
	var rs mcp.InputResponses
	if err := rs.Set("ok", mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"ok": true}}); err != nil {
		return err
	}
	p = &mcp.CallToolParams{Name: "confirm", Arguments: args(text, 0, 0), InputResponses: rs, RequestState: ir.Result.RequestState}
	res, err := o.modern.CallTool(ctx, p)
	if err != nil {
		return fmt.Errorf("mrtr round 2: %w", err)
	}
	if err := checkEcho(res, text); err != nil {
		return fmt.Errorf("mrtr round 2: %w", err)
	}
	return nil
}

// asker answers the legacy shim's elicitations of one session.
type asker struct {
	asked  atomic.Int32
	mu     sync.Mutex
	want   string             // the text of the confirm call being made
	cancel context.CancelFunc // if set: cancel that call instead of answering
}

func (a *asker) set(want string, cancel context.CancelFunc) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.want, a.cancel = want, cancel
}

func (a *asker) answer(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	a.asked.Add(1)
	a.mu.Lock()
	want, cancel := a.want, a.cancel
	a.mu.Unlock()
	if p.Message != "Echo "+want+"?" {
		return nil, fmt.Errorf("elicitation %q for the confirm of %q", p.Message, want)
	}
	if cancel != nil {
		cancel() // the client cancels the tools/call (notifications/cancelled)
		return nil, errors.New("soak: the call is cancelled instead")
	}
	return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"ok": true}}, nil
}

// legacy runs one whole legacy session through the mcpkit client.
func (o *op) legacy(ctx context.Context) (int, error) {
	a := new(asker)
	t := streamable.New(o.cfg.URL, &streamable.Options{HTTPClient: o.hc})
	c, err := client.Connect(ctx, t, &client.Options{
		Info:            mcp.Implementation{Name: "soak", Version: "1.0.0"},
		ProtocolVersion: mcp.LatestLegacy,
		ElicitHandler:   a.answer,
	})
	if err != nil {
		return 0, fmt.Errorf("legacy: connect: %w", err)
	}
	expected, err := o.session(ctx, c, t, a)
	if cerr := c.Close(); cerr != nil && err == nil { // DELETE
		err = fmt.Errorf("legacy: close (DELETE): %w", cerr)
	}
	return expected, err
}

func (o *op) session(ctx context.Context, c *client.Client, t *streamable.Conn, a *asker) (int, error) {
	if t.SessionID() == "" || c.ProtocolVersion() != mcp.LatestLegacy {
		return 0, fmt.Errorf("legacy: no session (id %q, version %q)", t.SessionID(), c.ProtocolVersion())
	}
	select {
	case <-t.Listening():
	case <-ctx.Done():
		running, stopped := t.ListenerStatus()
		return 0, fmt.Errorf("legacy: the GET listening stream was not established (running %v, stopped: %v): %w", running, stopped, ctx.Err())
	}
	for range LegacyEchoes {
		if err := o.echo(ctx, c); err != nil {
			return 0, fmt.Errorf("legacy: %w", err)
		}
	}
	text := o.text()
	a.set(text, nil)
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "confirm", Arguments: args(text, 0, 0)})
	if err != nil {
		return 0, fmt.Errorf("legacy: confirm: %w", err)
	}
	if err := checkEcho(res, text); err != nil {
		return 0, fmt.Errorf("legacy: confirm: %w", err)
	}
	if n := a.asked.Load(); n != 1 {
		return 0, fmt.Errorf("legacy: confirm: %d elicitations answered, want 1", n)
	}
	if err := o.progress(ctx, c, o.cfg.Steps); err != nil {
		return 0, fmt.Errorf("legacy: %w", err)
	}
	if o.rng.Float64() >= o.cfg.LegacyCancel {
		return 0, nil
	}
	if o.rng.IntN(2) == 0 {
		// A slow call, cancelled at its first notification.
		n, err := o.cancel(ctx, c)
		if err != nil {
			return 0, fmt.Errorf("legacy: %w", err)
		}
		if n == 0 { // it completed first: nothing was interrupted
			return 0, nil
		}
	} else {
		// A confirm call, cancelled while the shim waits for the answer
		// to its elicitation.
		text := o.text()
		cctx, cancel := context.WithCancel(ctx)
		a.set(text, cancel)
		_, err := c.CallTool(cctx, &mcp.CallToolParams{Name: "confirm", Arguments: args(text, 0, 0)})
		cancel()
		a.set("", nil)
		if !errors.Is(err, context.Canceled) || ctx.Err() != nil || a.asked.Load() != 2 {
			return 0, fmt.Errorf("legacy: confirm cancelled at its elicitation (%d asked): %w", a.asked.Load(), err)
		}
	}
	// The session goes on after a cancelled call.
	if err := o.echo(ctx, c); err != nil {
		return 1, fmt.Errorf("legacy: after the cancellation: %w", err)
	}
	return 1, nil
}

// post sends one JSON-RPC message with net/http.
func (o *op) post(ctx context.Context, body []byte, hdr map[string]string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return o.hc.Do(req)
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
}

// streamAndDrop posts a call, checks that the answer is an event stream,
// reads it up to its first event with data, checks that with first and
// closes the connection.
func (o *op) streamAndDrop(ctx context.Context, body []byte, hdr map[string]string, first func(data []byte) bool) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := o.post(sctx, body, hdr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("status %d, %s: %s", resp.StatusCode, ct, b)
	}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 1<<20))
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok || len(bytes.TrimSpace(data)) == 0 {
			continue // other fields, and the priming event's empty data
		}
		if !first(data) {
			return fmt.Errorf("unexpected first event: %.300s", data)
		}
		cancel() // closes the connection mid-stream
		return nil
	}
	return fmt.Errorf("stream ended before its first event (%v)", sc.Err())
}

// firstProgress wants the first progress notification.
func firstProgress(data []byte) bool {
	return bytes.Contains(data, []byte(`"notifications/progress"`)) && bytes.Contains(data, []byte(`"progress":1`))
}

func (o *op) disconnectModern(ctx context.Context) (int, error) {
	text := o.text()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"_meta": map[string]any{
			mcp.MetaKeyProgressToken:      "p1",
			mcp.MetaKeyProtocolVersion:    mcp.Version20260728,
			mcp.MetaKeyClientCapabilities: map[string]any{},
			mcp.MetaKeyClientInfo:         map[string]any{"name": "soak", "version": "1.0.0"},
		},
		"name": "progress", "arguments": args(text, o.cfg.SlowSteps, o.cfg.SlowDelayMs),
	}})
	hdr := map[string]string{"MCP-Protocol-Version": mcp.Version20260728, "Mcp-Method": "tools/call", "Mcp-Name": "progress"}
	if err := o.streamAndDrop(ctx, body, hdr, firstProgress); err != nil {
		return 0, fmt.Errorf("disconnect (modern): %w", err)
	}
	return 1, nil
}

// disconnectLegacy opens a legacy session by hand and closes the
// connection of a call mid-stream: a slow progress call after its first
// notification or, with elicit, a confirm call once the legacy shim's
// elicitation/create has arrived on the stream (it is never answered).
// Then it deletes the session, which must end the abandoned call.
func (o *op) disconnectLegacy(ctx context.Context, elicit bool) (int, error) {
	what := "legacy progress"
	if elicit {
		what = "legacy elicitation"
	}
	fail := func(format string, a ...any) (int, error) {
		return 0, fmt.Errorf("disconnect (%s): %s", what, fmt.Sprintf(format, a...))
	}
	init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + mcp.LatestLegacy + `","capabilities":{"elicitation":{}},"clientInfo":{"name":"soak","version":"1.0.0"}}}`)
	resp, err := o.post(ctx, init, nil)
	if err != nil {
		return fail("initialize: %v", err)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || sid == "" || !bytes.Contains(b, []byte(`"protocolVersion":"`+mcp.LatestLegacy+`"`)) {
		return fail("initialize: status %d, session %q: %.300s", resp.StatusCode, sid, b)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": mcp.LatestLegacy}
	resp, err = o.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), hdr)
	if err != nil {
		return fail("initialized: %v", err)
	}
	drain(resp)
	if resp.StatusCode != http.StatusAccepted {
		return fail("initialized: status %d", resp.StatusCode)
	}
	text := o.text()
	params := map[string]any{
		"_meta": map[string]any{mcp.MetaKeyProgressToken: "p1"},
		"name":  "progress", "arguments": args(text, o.cfg.SlowSteps, o.cfg.SlowDelayMs),
	}
	first := firstProgress
	if elicit {
		params = map[string]any{"name": "confirm", "arguments": args(text, 0, 0)}
		first = func(data []byte) bool {
			return bytes.Contains(data, []byte(`"method":"elicitation/create"`)) && bytes.Contains(data, []byte(`"Echo `+text+`?"`))
		}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	derr := o.streamAndDrop(ctx, body, hdr, first)
	// DELETE ends the session, whatever happened to the stream.
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, o.cfg.URL, nil)
	if err != nil {
		return 0, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err = o.hc.Do(req)
	if derr != nil {
		return fail("%v", derr)
	}
	if err != nil {
		return fail("DELETE: %v", err)
	}
	drain(resp)
	if resp.StatusCode/100 != 2 {
		return fail("DELETE: status %d", resp.StatusCode)
	}
	return 1, nil
}
