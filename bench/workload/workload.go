// Package workload defines the benchmark's requests (W1–W8), the idle sessions
// of W9, a minimal keep-alive HTTP/1.1 connection that sends pre-built
// requests, and the check applied to every answer.
package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Text is what every echo call sends and expects back.
const Text = "hello-bench-7f3a"

// BlobText is what the W6 "blob" tool returns: Text repeated to 64 KB.
var BlobText = strings.Repeat(Text, 65536/len(Text))

// Protocol versions.
const (
	Modern = "2026-07-28"
	Legacy = "2025-11-25"
)

// Endpoint paths (the same as package servers').
const (
	PathStateless = "/mcp"
	PathSession   = "/mcp-session"
	PathList      = "/mcp-tools"
	PathSSE       = "/mcp-sse"
	PathMRTR      = "/mcp-mrtr"
	PathNested    = "/mcp-nested"
)

// Progresses is how many notifications/progress the W6p "progress" tool
// sends before its result.
const Progresses = 10

// W7: the /mcp-tools endpoint's server has ListTools tools named
// tool000…tool199, listed ListPageSize to a page.
const (
	ListTools    = 200
	ListPageSize = 50
)

const envelope = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}},`

// Bodies.
var (
	// ModernCall is a 2026-07-28 tools/call: the envelope in _meta.
	ModernCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + envelope + `"name":"echo","arguments":{"text":"` + Text + `"}}}`)
	// ModernBlobCall is a 2026-07-28 tools/call of the "blob" tool (W6).
	ModernBlobCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + envelope + `"name":"blob","arguments":{"text":"` + Text + `"}}}`)
	// ModernProgressCall calls the "progress" tool with a progress token (W6p).
	ModernProgressCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}},"name":"progress","arguments":{"text":"` + Text + `"}}}`)
	// MRTRCall is the first round of W8: tools/call of "confirm" from a
	// client that can answer elicitations.
	MRTRCall = MRTRBody(nil, "")
	// NestedCall is W5's 2026-07-28 tools/call of "nested": ten
	// arguments, one a nested object and one an array, all valid.
	NestedCall = NestedBody(NestedArgs)
	// LegacyCall is a 2025-11-25 tools/call.
	LegacyCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + Text + `"}}}`)
	// Initialize opens a 2025-11-25 session.
	Initialize = []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}`)
	// Initialized is the notification that follows initialize.
	Initialized = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
)

// Header sets.
var (
	ModernHeaders         = [][2]string{{"MCP-Protocol-Version", Modern}, {"Mcp-Method", "tools/call"}, {"Mcp-Name", "echo"}}
	ModernBlobHeaders     = [][2]string{{"MCP-Protocol-Version", Modern}, {"Mcp-Method", "tools/call"}, {"Mcp-Name", "blob"}}
	ModernProgressHeaders = [][2]string{{"MCP-Protocol-Version", Modern}, {"Mcp-Method", "tools/call"}, {"Mcp-Name", "progress"}}
	ModernMRTRHeaders     = [][2]string{{"MCP-Protocol-Version", Modern}, {"Mcp-Method", "tools/call"}, {"Mcp-Name", "confirm"}}
	ModernListHeaders     = [][2]string{{"MCP-Protocol-Version", Modern}, {"Mcp-Method", "tools/list"}}
	ModernNestedHeaders   = [][2]string{{"MCP-Protocol-Version", Modern}, {"Mcp-Method", "tools/call"}, {"Mcp-Name", "nested"}}
	LegacyHeaders         = [][2]string{{"MCP-Protocol-Version", Legacy}}
)

// Workload names the request a worker repeats.
type Workload struct {
	Name, Desc string
	Path       string
	Headers    [][2]string
	Body       []byte
	// Session: open a legacy session per connection first, and send its
	// id with every call.
	Session bool
	// Churn: every iteration opens a session, calls once and deletes it
	// (initialize, notifications/initialized, tools/call, DELETE).
	Churn bool
	// MinBody: answers shorter than this are wrong (W6: the 64 KB text
	// appears twice, as content text and as structuredContent).
	MinBody int
	// Progress: the answer is an event stream with Progresses
	// notifications/progress before the result (W6p).
	Progress bool
	// MRTR: every iteration is two rounds of a Multi Round-Trip Request
	// (W8).
	MRTR bool
	// List: every iteration lists all tools, page by page (W7).
	List bool
	// Want: a successful answer also contains these bytes (W5: the sum
	// over the decoded arguments).
	Want []byte
	// Task: every iteration is a task lifecycle on the session (WT):
	// TaskLifecycle.
	Task bool
	// Sessions: not a request loop but W9, idle sessions opened and
	// measured (cmd/load).
	Sessions bool
}

// All lists the workloads by name.
var All = map[string]Workload{
	"W1":  {Name: "W1", Desc: "modern tools/call (2026-07-28, JSON)", Path: PathStateless, Headers: ModernHeaders, Body: ModernCall},
	"W2":  {Name: "W2", Desc: "session-less legacy tools/call (2025-11-25)", Path: PathStateless, Headers: LegacyHeaders, Body: LegacyCall},
	"W3":  {Name: "W3", Desc: "sessionful legacy tools/call (initialize per connection)", Path: PathSession, Headers: LegacyHeaders, Body: LegacyCall, Session: true},
	"W6":  {Name: "W6", Desc: "modern tools/call with a 64 KB result (2026-07-28, JSON)", Path: PathStateless, Headers: ModernBlobHeaders, Body: ModernBlobCall, MinBody: 2 * len(BlobText)},
	"W6p": {Name: "W6p", Desc: "modern tools/call answered as SSE: 10 notifications/progress, then the result", Path: PathSSE, Headers: ModernProgressHeaders, Body: ModernProgressCall, Progress: true},
	"W8":  {Name: "W8", Desc: "modern two-round MRTR: input_required with an elicitation and a sealed requestState, then the retry (latency per pair)", Path: PathMRTR, Headers: ModernMRTRHeaders, Body: MRTRCall, MRTR: true},
	"W7":  {Name: "W7", Desc: "modern tools/list of 200 tools, 50 a page (latency per 4-page walk)", Path: PathList, Headers: ModernListHeaders, List: true},
	"W5":  {Name: "W5", Desc: "modern tools/call of a validated nested input: 10 fields, a nested object and an array", Path: PathNested, Headers: ModernNestedHeaders, Body: NestedCall, Want: []byte(NestedWant)},
	"W9":  {Name: "W9", Desc: "idle legacy sessions (initialize, initialized, then idle): server RSS per session", Path: PathSession, Headers: LegacyHeaders, Body: LegacyCall, Sessions: true},
	"WT":  {Name: "WT", Desc: "task lifecycle on a legacy session: task-augmented tools/call, tasks/get until completed, tasks/result (latency per cycle)", Path: PathTasks, Headers: LegacyHeaders, Body: TaskCall, Session: true, Task: true},
	"W4":  {Name: "W4", Desc: "session churn: initialize, initialized, tools/call, DELETE (latency per cycle)", Path: PathSession, Headers: LegacyHeaders, Body: LegacyCall, Churn: true},
}

// Supported reports whether a server takes part in a workload: the raw
// ceiling has no sessions, no streams and no tools/list; only mcpkit has
// 2026-07-28 Multi Round-Trip Requests (W8); WT (tasks) needs benchserver
// -cluster.
func Supported(server, workload string) bool {
	if workload == "WT" {
		return server == "cluster"
	}
	if workload == "W8" {
		return server == "mcpkit"
	}
	return server != "raw" || (workload != "W3" && workload != "W4" && workload != "W6p" && workload != "W7" && workload != "W9")
}

// BuildRequest returns the bytes of one HTTP/1.1 POST.
func BuildRequest(host, path string, headers [][2]string, body []byte) []byte {
	return buildRequest("POST", host, path, headers, body)
}

// BuildDelete returns the bytes of the DELETE that ends session sid.
func BuildDelete(host, path, sid string) []byte {
	return buildRequest("DELETE", host, path, append([][2]string{{"Mcp-Session-Id", sid}}, LegacyHeaders...), nil)
}

func buildRequest(method, host, path string, headers [][2]string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n", method, path, host)
	for _, h := range headers {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	return b.Bytes()
}

// HTTPRequest returns w's request as an *http.Request for handler
// benchmarks and tests (sid, if set, is the session id).
func (w Workload) HTTPRequest(url, sid string) *http.Request {
	r, err := http.NewRequest(http.MethodPost, url+w.Path, bytes.NewReader(w.Body))
	if err != nil {
		panic(err)
	}
	SetHeaders(r.Header, w.Headers)
	if sid != "" {
		r.Header.Set("Mcp-Session-Id", sid)
	}
	return r
}

// SetHeaders sets the common headers and hs on h.
func SetHeaders(h http.Header, hs [][2]string) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	for _, kv := range hs {
		h.Set(kv[0], kv[1])
	}
}

var (
	wantText = []byte(Text)
	isError  = []byte(`"isError":true`)
	rpcError = []byte(`"error":{`)
)

// Check is the cheap test applied to every answer under load: status 200,
// a result carrying the echoed text, no error. An SSE answer is accepted
// if its data carries the same.
func Check(status int, body []byte) error {
	if status != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", status, body)
	}
	if !bytes.Contains(body, wantText) || bytes.Contains(body, isError) || bytes.Contains(body, rpcError) || !bytes.Contains(body, []byte(`"result"`)) {
		return fmt.Errorf("unexpected answer: %.300s", body)
	}
	return nil
}

// Check is the package Check plus the workload's own conditions.
func (w Workload) Check(status int, body []byte) error {
	if err := Check(status, body); err != nil {
		return err
	}
	if w.Progress {
		if n := bytes.Count(body, []byte(`"notifications/progress"`)); n != Progresses || !bytes.Contains(body, []byte("data:")) {
			return fmt.Errorf("%d progress notifications (want %d) or not an event stream: %.300s", n, Progresses, body)
		}
		if r := bytes.Index(body, []byte(`"result"`)); r < bytes.LastIndex(body, []byte(`"notifications/progress"`)) {
			return fmt.Errorf("the result comes before the last progress notification: %.300s", body)
		}
	}
	if w.Want != nil && !bytes.Contains(body, w.Want) {
		return fmt.Errorf("answer without %s: %.300s", w.Want, body)
	}
	if len(body) < w.MinBody {
		return fmt.Errorf("answer of %d bytes, want at least %d: %.300s", len(body), w.MinBody, body)
	}
	return nil
}

// NestedArgs are W5's valid arguments (servers.NestedSchema); NestedWant
// is what the answer must contain: servers.NestedSum of them,
// 7 + 10·3 + 100·3 + 1000·36.
const (
	NestedArgs = `{"id":"req-42","text":"` + Text + `","count":7,"ratio":0.25,"enabled":true,"mode":"safe","priority":3,"tags":["alpha","beta","gamma"],"owner":{"name":"Ada","email":"ada@example.com","age":36},"note":"a nested input of ten fields"}`
	NestedWant = `"sum":36337`
)

// NestedInvalid are W5 arguments that each break one constraint of the
// schema; every validating server must refuse them.
var NestedInvalid = map[string]string{
	"enum":          strings.Replace(NestedArgs, `"safe"`, `"bogus"`, 1),
	"minimum":       strings.Replace(NestedArgs, `"count":7`, `"count":-1`, 1),
	"nested member": strings.Replace(NestedArgs, `"name":"Ada",`, ``, 1),
	"array item":    strings.Replace(NestedArgs, `"beta"`, `""`, 1),
	"pattern":       strings.Replace(NestedArgs, `"req-42"`, `"REQ 42"`, 1),
}

// NestedBody is a W5 tools/call of "nested" with these arguments.
func NestedBody(args string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + envelope + `"name":"nested","arguments":` + args + `}}`)
}

// ListBody is a 2026-07-28 tools/list request for the page after cursor
// ("" for the first).
func ListBody(cursor string) []byte {
	p := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + envelope
	if cursor != "" {
		q, _ := json.Marshal(cursor)
		p += `"cursor":` + string(q) + `,`
	}
	return []byte(strings.TrimSuffix(p, ",") + `}}`)
}

// ListAll walks every page of tools/list through do (which sends one
// request body and returns the answer) and checks that the pages hold
// tool000…tool199 in order, ending with no nextCursor. (mcp-go ends a
// list whose last page is full with one more, empty page.)
func ListAll(do func(body []byte) (int, []byte, error)) error {
	cursor, n := "", 0
	for pages := 0; ; pages++ {
		if pages > ListTools {
			return errors.New("tools/list: too many pages")
		}
		st, body, err := do(ListBody(cursor))
		if err != nil {
			return err
		}
		if st != http.StatusOK {
			return fmt.Errorf("tools/list: status %d: %.200s", st, body)
		}
		var a struct {
			Result *struct {
				Tools []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(body, &a); err != nil || a.Result == nil || len(a.Result.Tools) == 0 && a.Result.NextCursor != "" {
			return fmt.Errorf("tools/list: unexpected answer (%v): %.300s", err, body)
		}
		for _, t := range a.Result.Tools {
			if want := ToolName(n); t.Name != want || len(t.InputSchema) == 0 {
				return fmt.Errorf("tools/list: tool %d is %q, want %q with an input schema", n, t.Name, want)
			}
			n++
		}
		if a.Result.NextCursor == "" {
			if n != ListTools {
				return fmt.Errorf("tools/list: %d tools, want %d", n, ListTools)
			}
			return nil
		}
		cursor = a.Result.NextCursor
	}
}

// MRTRBody is a W8 tools/call of "confirm": the first round when
// responses is nil, else the retry carrying them and the sealed state.
func MRTRBody(responses map[string]any, state string) []byte {
	p := map[string]any{
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    Modern,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "bench", "version": "1.0.0"},
		},
		"name":      "confirm",
		"arguments": map[string]any{"text": Text},
	}
	if responses != nil {
		p["inputResponses"] = responses
		p["requestState"] = state
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": p})
	return b
}

// MRTRPair runs W8 through do: the first round must answer input_required
// with an elicitation "ok" and a requestState; the retry, with the
// acceptance and that state, must answer the echo.
func MRTRPair(do func(body []byte) (int, []byte, error)) error {
	st, body, err := do(MRTRCall)
	if err != nil {
		return err
	}
	if st != http.StatusOK {
		return fmt.Errorf("round 1: status %d: %.200s", st, body)
	}
	var a struct {
		Result *struct {
			ResultType    string `json:"resultType"`
			InputRequests map[string]struct {
				Method string `json:"method"`
			} `json:"inputRequests"`
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &a); err != nil || a.Result == nil || a.Result.ResultType != "input_required" ||
		a.Result.InputRequests["ok"].Method != "elicitation/create" || a.Result.RequestState == "" {
		return fmt.Errorf("round 1: unexpected answer (%v): %.300s", err, body)
	}
	retry := MRTRBody(map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}, a.Result.RequestState)
	st, body, err = do(retry)
	if err != nil {
		return err
	}
	if err := Check(st, body); err != nil {
		return fmt.Errorf("round 2: %w", err)
	}
	if !bytes.Contains(body, []byte(`"resultType":"complete"`)) {
		return fmt.Errorf("round 2: not a complete result: %.300s", body)
	}
	return nil
}

// ToolName is the name of the W7 server's tool i.
func ToolName(i int) string { return fmt.Sprintf("tool%03d", i) }

// Trim shortens s for messages.
func Trim(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
