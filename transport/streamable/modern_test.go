package streamable

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/internal/mcpheader"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// modernParams returns params with a 2026-07-28 envelope and the members
// in more (a JSON object's members, without braces).
func modernParams(version, more string) string {
	p := fmt.Sprintf(`{"_meta":{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientCapabilities":{}}`, version)
	if more != "" {
		p += "," + more
	}
	return p + "}"
}

// decodeHeader undoes the SEP-2243 base64 form.
func decodeHeader(t testing.TB, v string) string {
	t.Helper()
	if !strings.HasPrefix(v, "=?base64?") || !strings.HasSuffix(v, "?=") {
		return v
	}
	b, err := base64.StdEncoding.Strict().DecodeString(strings.TrimSuffix(strings.TrimPrefix(v, "=?base64?"), "?="))
	if err != nil {
		t.Fatalf("header %q: %v", v, err)
	}
	return string(b)
}

// TestModernRequestHeaders: a request with a modern envelope goes with
// MCP-Protocol-Version equal to the envelope's, Mcp-Method, Mcp-Name
// (encoded) for tools/call, prompts/get and resources/read, the headers
// attached to its context, and no session headers; the Conn adopts no
// session id a server sends.
func TestModernRequestHeaders(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		w.Header().Set("Mcp-Session-Id", "must-be-ignored")
		writeJSON(w, http.StatusOK, result(in.Msg.ID, `{"resultType":"complete"}`))
	})
	c := newConn(t, f, &Options{Header: http.Header{"Authorization": {"Bearer x"}}})
	for i, tc := range []struct {
		method, more, name string
		hasName            bool
	}{
		{mcp.MethodServerDiscover, "", "", false},
		{mcp.MethodToolsList, `"cursor":"c1"`, "", false},
		{mcp.MethodToolsCall, `"name":"my-hyphenated-tool","arguments":{}`, "my-hyphenated-tool", true},
		{mcp.MethodToolsCall, `"name":"Grüße","arguments":{}`, "Grüße", true},
		{mcp.MethodToolsCall, `"name":" spaced","arguments":{}`, " spaced", true},
		{mcp.MethodToolsCall, `"name":"=?base64?SGk=?=","arguments":{}`, "=?base64?SGk=?=", true},
		{mcp.MethodPromptsGet, `"name":"greeting"`, "greeting", true},
		{mcp.MethodResourcesRead, `"uri":"file:///path/to/file%20name.txt"`, "file:///path/to/file%20name.txt", true},
		{mcp.MethodResourcesRead, `"uri":"file:///tmp/naïve.txt"`, "file:///tmp/naïve.txt", true},
		{mcp.MethodResourcesList, "", "", false},
		{mcp.MethodTasksGet, `"taskId":"t-1"`, "t-1", true},
		{mcp.MethodTasksUpdate, `"taskId":"t-2","inputResponses":{}`, "t-2", true},
		{mcp.MethodTasksCancel, `"taskId":"t-3"`, "t-3", true},
	} {
		id := mcp.IntID(int64(i + 1))
		ctx := testCtx(t)
		if err := c.Write(ctx, transport.Message{Data: []byte(request(id, tc.method, modernParams("2026-07-28", tc.more)))}); err != nil {
			t.Fatal(err)
		}
		readMsg(t, c)
		in := f.next(t, http.MethodPost)
		h := in.Header
		if got := h.Get("MCP-Protocol-Version"); got != "2026-07-28" {
			t.Errorf("%s: MCP-Protocol-Version %q", tc.method, got)
		}
		if got := h.Values("Mcp-Method"); len(got) != 1 || got[0] != tc.method {
			t.Errorf("%s: Mcp-Method %q", tc.method, got)
		}
		names := h.Values("Mcp-Name")
		switch {
		case !tc.hasName && len(names) != 0:
			t.Errorf("%s: Mcp-Name %q on a method without one", tc.method, names)
		case tc.hasName && (len(names) != 1 || decodeHeader(t, names[0]) != tc.name):
			t.Errorf("%s: Mcp-Name %q, want %q", tc.method, names, tc.name)
		case tc.hasName && names[0] != mcpheader.Encode(tc.name):
			t.Errorf("%s: Mcp-Name %q, want %q", tc.method, names[0], mcpheader.Encode(tc.name))
		}
		if h.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s: sent Mcp-Session-Id %q", tc.method, h.Get("Mcp-Session-Id"))
		}
		if h.Get("Authorization") != "Bearer x" {
			t.Errorf("%s: lost Options.Header", tc.method)
		}
	}
	if c.SessionID() != "" {
		t.Errorf("adopted session %q", c.SessionID())
	}
	// The envelope's revision is the header's, whatever it is.
	mustWrite(t, c, request(mcp.IntID(99), mcp.MethodToolsList, modernParams("2027-01-01", "")))
	readMsg(t, c)
	if got := f.next(t, http.MethodPost).Header.Get("MCP-Protocol-Version"); got != "2027-01-01" {
		t.Errorf("MCP-Protocol-Version %q, want the envelope's 2027-01-01", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := f.count(http.MethodDelete) + f.count(http.MethodGet); n != 0 {
		t.Errorf("%d GET/DELETE requests: the modern wire has none", n)
	}
}

// TestMessageHeaders: the headers of a written message
// (transport.Message.Header) go on its POST, encoded: plain visible
// ASCII as is (the empty value included), anything else in the base64
// form; a name given twice sends both values.
func TestMessageHeaders(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		writeJSON(w, http.StatusOK, result(in.Msg.ID, `{"resultType":"complete","content":[]}`))
	})
	c := newConn(t, f, nil)
	ctx := testCtx(t)
	want := map[string]string{
		"Mcp-Param-Region": "us-west1", "Mcp-Param-Priority": "42", "Mcp-Param-Verbose": "false",
		"Mcp-Param-EmptyVal": "", "Mcp-Param-InternalSpace": "us west 1", "Mcp-Param-NonAscii": "Hello, 世界",
		"Mcp-Param-Whitespace": " padded ", "Mcp-Param-LeadingSpace": " us-west1", "Mcp-Param-TrailingSpace": "us-west1 ",
		"Mcp-Param-ControlChar": "line1\nline2", "Mcp-Param-CrLf": "line1\r\nline2", "Mcp-Param-Tab": "\tindented",
		"Mcp-Param-Method": "test-method",
	}
	var hs []transport.Header
	for k, v := range want {
		hs = append(hs, transport.Header{Name: k, Value: v})
	}
	hs = append(hs, transport.Header{Name: "Mcp-Param-Twice", Value: "one"}, transport.Header{Name: "Mcp-Param-Twice", Value: "two"})
	msg := transport.Message{Data: []byte(request(mcp.IntID(1), mcp.MethodToolsCall, modernParams("2026-07-28", `"name":"t"`))), Header: hs}
	if err := c.Write(ctx, msg); err != nil {
		t.Fatal(err)
	}
	readMsg(t, c)
	h := f.next(t, http.MethodPost).Header
	for k, v := range want {
		got, ok := h[http.CanonicalHeaderKey(k)]
		if !ok || len(got) != 1 {
			t.Errorf("%s: %q (present %v)", k, got, ok)
			continue
		}
		if decodeHeader(t, got[0]) != v || got[0] != mcpheader.Encode(v) {
			t.Errorf("%s: %q, want %q", k, got[0], mcpheader.Encode(v))
		}
	}
	if got := h.Values("Mcp-Param-Twice"); !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("Mcp-Param-Twice: %q, want both values in order", got)
	}
	if h.Get("Mcp-Method") != mcp.MethodToolsCall {
		t.Errorf("Mcp-Param-Method clobbered Mcp-Method: %q", h.Get("Mcp-Method"))
	}
	// A message written without them carries none.
	mustWrite(t, c, request(mcp.IntID(2), mcp.MethodToolsCall, modernParams("2026-07-28", `"name":"t"`)))
	readMsg(t, c)
	for k := range f.next(t, http.MethodPost).Header {
		if strings.HasPrefix(k, "Mcp-Param-") {
			t.Errorf("header %s on a message without headers", k)
		}
	}
}

// TestModernCancelClosesStream: the end of the context of a modern
// request closes its POST (the 2026 cancellation); the
// notifications/cancelled the layer above then writes is not POSTed, and
// the stream is never resumed.
func TestModernCancelClosesStream(t *testing.T) {
	closed := make(chan struct{}, 4)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		if r.Method != http.MethodPost || !in.Msg.IsRequest() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		sseStart(w)
		sseEvent(w, "ev-1", 0, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`)
		hold(r)
		closed <- struct{}{}
	})
	resumes := &resumeLog{}
	c := newConn(t, f, &Options{Logger: slog.New(resumes)})
	ctx, cancel := context.WithCancel(testCtx(t))
	if err := c.Write(ctx, transport.Message{Data: []byte(request(mcp.IntID(7), mcp.MethodSubscriptionsListen, modernParams("2026-07-28", `"notifications":{"toolsListChanged":true}`)))}); err != nil {
		t.Fatal(err)
	}
	if m := readMsg(t, c); m.Method != mcp.NotificationProgress {
		t.Fatalf("read %v", m)
	}
	cancel()
	recv(t, closed, "the server to see the stream closed")
	if err := c.Write(testCtx(t), transport.Message{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)}); err != nil {
		t.Fatal(err)
	}
	// Write POSTs before it returns, so a POSTed notification would be
	// counted already.
	if n := len(f.of(http.MethodPost)); n != 1 {
		t.Errorf("%d POSTs, want only the request (no notifications/cancelled)", n)
	}

	// notifications/cancelled for a request in flight closes its stream
	// (when the layer above cancels without ending the context).
	if err := c.Write(testCtx(t), transport.Message{Data: []byte(request(mcp.IntID(8), mcp.MethodToolsCall, modernParams("2026-07-28", `"name":"slow"`)))}); err != nil {
		t.Fatal(err)
	}
	readMsg(t, c)
	if err := c.Write(testCtx(t), transport.Message{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`)}); err != nil {
		t.Fatal(err)
	}
	recv(t, closed, "the second stream to close")
	if n := len(f.of(http.MethodPost)); n != 2 {
		t.Errorf("%d POSTs, want 2", n)
	}
	resumes.check(t, c, f)
}

// resumeLog counts the Conn's decisions to resume a stream: each is
// logged before the retry delay and the GET. After Close, which waits for
// every stream goroutine, a zero count shows that no stream was to be
// resumed, however slow the machine, where a sleep could only hope so.
type resumeLog struct{ n atomic.Int32 }

func (r *resumeLog) Enabled(context.Context, slog.Level) bool { return true }
func (r *resumeLog) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *resumeLog) WithGroup(string) slog.Handler            { return r }
func (r *resumeLog) Handle(_ context.Context, rec slog.Record) error {
	if strings.Contains(rec.Message, "resuming") {
		r.n.Add(1)
	}
	return nil
}

// check closes c and fails t if any stream was resumed or was to be.
func (r *resumeLog) check(t *testing.T, c *Conn, f *fake) {
	t.Helper()
	_ = c.Close()
	if n := r.n.Load(); n != 0 {
		t.Errorf("the Conn decided %d times to resume a modern stream", n)
	}
	if n := f.count(http.MethodGet); n != 0 {
		t.Errorf("%d GETs: a modern stream was resumed", n)
	}
}

// TestModernStreamEndsEarly: a modern stream that ends before its
// response fails the request at once (with an error response for the
// call), even with an event id: the 2026 transport has no resumption.
func TestModernStreamEndsEarly(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		sseStart(w)
		sseEvent(w, "ev-1", 10*time.Millisecond, "")
	})
	resumes := &resumeLog{}
	c := newConn(t, f, &Options{Logger: slog.New(resumes)})
	mustWrite(t, c, request(mcp.IntID(3), mcp.MethodToolsCall, modernParams("2026-07-28", `"name":"t"`)))
	m := readMsg(t, c)
	if m.ID != mcp.IntID(3) || m.Error == nil || !contains(m.Error.Message, "not resumed") {
		t.Fatalf("read %v, want the error response for request 3", m)
	}
	resumes.check(t, c, f)
}

// modernFake answers like a modern server (discover, tools/list,
// tools/call), with the status and body the test's override gives for a
// method when set.
func modernFake(t testing.TB, override func(w http.ResponseWriter, r *http.Request, in rec) bool) *fake {
	return newFake(t, func(w http.ResponseWriter, r *http.Request, in rec) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if !in.Msg.IsRequest() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if override != nil && override(w, r, in) {
			return
		}
		switch in.Msg.Method {
		case mcp.MethodServerDiscover:
			writeJSON(w, http.StatusOK, result(in.Msg.ID, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"private"}`))
		case mcp.MethodToolsList:
			writeJSON(w, http.StatusOK, result(in.Msg.ID, `{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[`+
				`{"name":"headers","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"priority":{"type":"integer","x-mcp-header":"Priority"},"verbose":{"type":"boolean","x-mcp-header":"Verbose"},"greeting":{"type":"string","x-mcp-header":"Greeting"},"float_val":{"type":"number"}}}},`+
				`{"name":"bad","inputSchema":{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}}]}`))
		case mcp.MethodToolsCall:
			writeJSON(w, http.StatusOK, result(in.Msg.ID, `{"resultType":"complete","content":[]}`))
		default:
			writeJSON(w, http.StatusNotFound, rpcError(in.Msg.ID, -32601, "Method not found"))
		}
	})
}

// TestClientDetectsOverHTTP: the client probes with a modern POST; a 400
// without a recognized modern error body means a legacy server (fall back
// to initialize); a modern error body, or a result, a modern one.
func TestClientDetectsOverHTTP(t *testing.T) {
	legacyAnswer := func(status int, body string) func(w http.ResponseWriter, r *http.Request, in rec) bool {
		return func(w http.ResponseWriter, r *http.Request, in rec) bool {
			switch in.Msg.Method {
			case mcp.MethodInitialize:
				answerInit(w, in, "s-1")
			case mcp.MethodServerDiscover:
				if body == "" {
					w.WriteHeader(status)
				} else {
					writeJSON(w, status, body)
				}
			default:
				writeJSON(w, http.StatusOK, result(in.Msg.ID, `{"tools":[]}`))
			}
			return true
		}
	}
	for _, tc := range []struct {
		name     string
		override func(w http.ResponseWriter, r *http.Request, in rec) bool
		era      client.Era
	}{
		{"modern", nil, client.EraModern},
		{"400 session required", legacyAnswer(http.StatusBadRequest, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: the Mcp-Session-Id header is required"}}`), client.EraLegacy},
		{"400 invalid session, with the id", legacyAnswer(http.StatusBadRequest, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Invalid or missing session ID"}}`), client.EraLegacy},
		{"400 empty", legacyAnswer(http.StatusBadRequest, ""), client.EraLegacy},
		{"404 plain", legacyAnswer(http.StatusNotFound, ""), client.EraLegacy},
		{"405", legacyAnswer(http.StatusMethodNotAllowed, ""), client.EraLegacy},
		{"200 method not found", legacyAnswer(http.StatusOK, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`), client.EraLegacy},
		{"400 -32022 with id", func(w http.ResponseWriter, r *http.Request, in rec) bool {
			if in.Msg.Method == mcp.MethodServerDiscover && in.Msg.ID == mcp.IntID(1) {
				writeJSON(w, http.StatusBadRequest, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`)
				return true
			}
			return false
		}, client.EraModern},
		{"400 -32022 without id", func(w http.ResponseWriter, r *http.Request, in rec) bool {
			if in.Msg.Method == mcp.MethodServerDiscover && in.Msg.ID == mcp.IntID(1) {
				writeJSON(w, http.StatusBadRequest, `{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"x"}}}`)
				return true
			}
			return false
		}, client.EraModern},
		{"400 -32020", func(w http.ResponseWriter, r *http.Request, in rec) bool {
			if in.Msg.Method == mcp.MethodServerDiscover {
				writeJSON(w, http.StatusBadRequest, rpcError(in.Msg.ID, -32020, "Header mismatch"))
				return true
			}
			return false
		}, client.EraModern},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := modernFake(t, tc.override)
			cl, err := client.Connect(testCtx(t), newConn(t, f, nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if cl.Era() != tc.era {
				t.Fatalf("era %v, want %v", cl.Era(), tc.era)
			}
			if _, err := cl.ListTools(testCtx(t), nil); err != nil {
				t.Fatal(err)
			}
			posts := f.of(http.MethodPost)
			if posts[0].Msg.Method != mcp.MethodServerDiscover || posts[0].Header.Get("Mcp-Method") != mcp.MethodServerDiscover || posts[0].Header.Get("MCP-Protocol-Version") != "2026-07-28" {
				t.Errorf("the probe: %v %v", posts[0], posts[0].Header)
			}
			if tc.era == client.EraLegacy {
				if posts[1].Msg.Method != mcp.MethodInitialize {
					t.Errorf("after the probe: %v, want initialize", posts[1])
				}
				last := posts[len(posts)-1]
				if last.Header.Get("Mcp-Session-Id") != "s-1" || last.Header.Get("Mcp-Method") != "" {
					t.Errorf("legacy tools/list headers %v", last.Header)
				}
			}
			if tc.era == client.EraModern {
				for _, p := range posts {
					if p.Msg.Method == mcp.MethodInitialize || p.Header.Get("Mcp-Session-Id") != "" {
						t.Errorf("modern POST %v with %v", p, p.Header)
					}
				}
				if f.count(http.MethodGet) != 0 {
					t.Error("a GET listener on a modern connection")
				}
			}
		})
	}
}

// TestClientParamHeadersOverHTTP: the client mirrors annotated tool
// arguments into Mcp-Param-* headers, encoded; null and absent arguments
// have none; a tool with invalid annotations is never called.
func TestClientParamHeadersOverHTTP(t *testing.T) {
	f := modernFake(t, nil)
	cl, err := client.Connect(testCtx(t), newConn(t, f, nil), &client.Options{ProtocolVersion: mcp.Version20260728})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testCtx(t)
	res, err := cl.ListTools(ctx, nil)
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "headers" {
		t.Fatalf("tools %+v %v: want only the valid tool", res, err)
	}
	if _, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: "headers", Arguments: jsontext.Value(`{"region":"us-west1","priority":42,"verbose":true,"greeting":" Hello, 世界","float_val":3.14}`)}); err != nil {
		t.Fatal(err)
	}
	h := f.of(http.MethodPost)[1].Header
	for k, v := range map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-Priority": "42", "Mcp-Param-Verbose": "true", "Mcp-Param-Greeting": mcpheader.Encode(" Hello, 世界"), "Mcp-Name": "headers", "Mcp-Method": "tools/call"} {
		if got := h.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if _, ok := h["Mcp-Param-Float_val"]; ok {
		t.Error("an unannotated argument was mirrored")
	}
	if _, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: "headers", Arguments: jsontext.Value(`{"region":"us-east1","priority":1,"verbose":null}`)}); err != nil {
		t.Fatal(err)
	}
	h = f.of(http.MethodPost)[2].Header
	if _, ok := h["Mcp-Param-Verbose"]; ok || h.Get("Mcp-Param-Region") != "us-east1" {
		t.Errorf("null argument: headers %v", h)
	}
	if _, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: "bad"}); err == nil {
		t.Error("called a tool with invalid annotations")
	}
	if n := len(f.of(http.MethodPost)); n != 3 {
		t.Errorf("%d POSTs", n)
	}
}

// TestClientRetries32022OverHTTP: the request-metadata scenario's server
// refuses the first request with 400 and -32022; the client retries it
// once in a revision the error names, with a new id.
func TestClientRetries32022OverHTTP(t *testing.T) {
	first := true
	f := modernFake(t, func(w http.ResponseWriter, r *http.Request, in rec) bool {
		if first {
			first = false
			writeJSON(w, http.StatusBadRequest, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`, in.Msg.ID))
			return true
		}
		return false
	})
	cl, err := client.Connect(testCtx(t), newConn(t, f, nil), &client.Options{ProtocolVersion: mcp.Version20260728})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.ListTools(testCtx(t), nil); err != nil {
		t.Fatal(err)
	}
	posts := f.of(http.MethodPost)
	if len(posts) != 2 || posts[0].Msg.ID == posts[1].Msg.ID {
		t.Fatalf("POSTs %v", posts)
	}
	for _, p := range posts {
		if p.Header.Get("MCP-Protocol-Version") != "2026-07-28" {
			t.Errorf("%v: header %q", p, p.Header.Get("MCP-Protocol-Version"))
		}
	}
}

// TestClientListenOverHTTP: a subscription is one POST whose event stream
// carries the acknowledgement and the tagged notifications; ending the
// subscription closes that stream, and nothing else is sent.
func TestClientListenOverHTTP(t *testing.T) {
	closed := make(chan struct{}, 2)
	f := modernFake(t, func(w http.ResponseWriter, r *http.Request, in rec) bool {
		if in.Msg.Method != mcp.MethodSubscriptionsListen {
			return false
		}
		id := in.Msg.ID.String()
		sseStart(w)
		sseEvent(w, "", 0, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`+id+`},"notifications":{"toolsListChanged":true}}}`)
		sseRaw(w, ": keep-alive\n\n")
		sseEvent(w, "", 0, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`+id+`}}}`)
		<-r.Context().Done()
		closed <- struct{}{}
		return true
	})
	_ = f
	cl, err := client.Connect(testCtx(t), newConn(t, f, nil), &client.Options{ProtocolVersion: mcp.Version20260728})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithCancel(testCtx(t))
	s, err := cl.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	for n := range s.Notifications() {
		if n.Method != mcp.NotificationToolsListChanged {
			t.Errorf("got %s", n.Method)
		}
		break
	}
	cancel()
	recv(t, closed, "the listen stream to close")
	// The subscription ends after its call returns, and the call returns
	// after writing its cancellation (jsonrpc.Conn.Call), which Write
	// would have POSTed before returning: the count is final here.
	recv(t, s.Done(), "the subscription to end")
	if n := len(f.of(http.MethodPost)); n != 1 {
		t.Errorf("%d POSTs, want the listen request only", n)
	}
}

// TestNameValueShared: the Mcp-Name header's value of a name is built
// once and shared by the requests that name it, encoded as SEP-2243 asks;
// names that take each other's slot still get their own value.
func TestNameValueShared(t *testing.T) {
	c := New("http://127.0.0.1:1/mcp", nil)
	defer c.Close()
	a := c.nameValue("echo")
	if b := c.nameValue("echo"); len(a) != 1 || len(b) != 1 || &a[0] != &b[0] || a[0] != "echo" {
		t.Fatalf("two requests naming echo: %q at %p, %q at %p; want one shared value", a, a, b, b)
	}
	if v := c.nameValue("caf\u00e9"); len(v) != 1 || decodeHeader(t, v[0]) != "caf\u00e9" || v[0] == "caf\u00e9" {
		t.Errorf("a name that is not plain ASCII: %q", v)
	}
	for i := range 4 * nameSlots {
		name := fmt.Sprintf("tool-%d", i)
		if v := c.nameValue(name); len(v) != 1 || v[0] != name || cap(v) != 1 {
			t.Fatalf("%s: %q (cap %d)", name, v, cap(v))
		}
	}
}
