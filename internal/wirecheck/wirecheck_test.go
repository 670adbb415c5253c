package wirecheck

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestEveryRevisionCompiles(t *testing.T) {
	for _, rev := range Revisions {
		c := Need(t, rev)
		if c.Revision() != rev {
			t.Errorf("Revision() = %q, want %q", c.Revision(), rev)
		}
		for _, m := range []string{"tools/call", "tools/list", "resources/read", "prompts/get"} {
			if _, err := c.ResultDefinition(m); err != nil {
				t.Errorf("%s: ResultDefinition(%s): %v", rev, m, err)
			}
		}
		// Every wire request of every revision has a result definition.
		for m := range c.requests {
			if _, err := c.ResultDefinition(m); err != nil {
				t.Errorf("%s: %v", rev, err)
			}
		}
		if c2 := Need(t, rev); c2 != c {
			t.Errorf("%s: For compiled the schema twice", rev)
		}
	}
}

func TestMethodMaps(t *testing.T) {
	tests := []struct {
		rev, method, def, result string
	}{
		{"2024-11-05", "ping", "PingRequest", "EmptyResult"},
		{"2024-11-05", "initialize", "InitializeRequest", "InitializeResult"},
		{"2025-03-26", "logging/setLevel", "SetLevelRequest", "EmptyResult"},
		{"2025-06-18", "elicitation/create", "ElicitRequest", "ElicitResult"},
		{"2025-11-25", "tools/call", "CallToolRequest", "CallToolResult"},
		{"2025-11-25", "tasks/result", "GetTaskPayloadRequest", "GetTaskPayloadResult"},
		{"2025-11-25", "resources/unsubscribe", "UnsubscribeRequest", "EmptyResult"},
		{"2026-07-28", "tools/call", "CallToolRequest", "CallToolResultResponse"},
		{"2026-07-28", "server/discover", "DiscoverRequest", "DiscoverResultResponse"},
		{"2026-07-28", "subscriptions/listen", "SubscriptionsListenRequest", "SubscriptionsListenResultResponse"},
	}
	for _, tt := range tests {
		c := Need(t, tt.rev)
		if got := c.requests[tt.method]; got != tt.def {
			t.Errorf("%s %s: definition %q, want %q", tt.rev, tt.method, got, tt.def)
		}
		if got, err := c.ResultDefinition(tt.method); got != tt.result || err != nil {
			t.Errorf("%s %s: result definition %q, %v; want %q", tt.rev, tt.method, got, err, tt.result)
		}
	}
	c := Need(t, "2026-07-28")
	if got := c.notifications["notifications/cancelled"]; got != "CancelledNotification" {
		t.Errorf("2026-07-28 notifications/cancelled: %q, want CancelledNotification", got)
	}
	if !c.clientSends["notifications/cancelled"] || !c.serverSends["notifications/cancelled"] {
		t.Error("2026-07-28: both sides send notifications/cancelled")
	}
}

// TestOfficialExamples checks every example of 2026-07-28 against the
// definition it illustrates and, for messages, as a message.
func TestOfficialExamples(t *testing.T) {
	c := Need(t, "2026-07-28")
	dir := Dir(t)
	files, err := filepath.Glob(filepath.Join(dir, "2026-07-28", "examples", "*", "*.json"))
	if err != nil || len(files) < 50 {
		t.Fatalf("found %d examples (%v)", len(files), err)
	}
	wire := map[string]bool{}
	for _, d := range c.requests {
		wire[d] = true
	}
	for _, d := range c.notifications {
		wire[d] = true
	}
	responses := map[string]string{}
	for m, r := range c.results {
		responses[r.name] = m
	}
	var checked int
	for _, f := range files {
		def := filepath.Base(filepath.Dir(f))
		name := def + "/" + filepath.Base(f)
		msg, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.CheckDefinition(def, msg); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		switch {
		case wire[def]:
			checked++
			if err := c.Check(msg); err != nil {
				t.Errorf("%s: Check: %v", name, err)
			}
		case strings.HasSuffix(def, "ResultResponse"):
			checked++
			if err := c.CheckResult(responses[def], msg); err != nil {
				t.Errorf("%s: CheckResult(%q): %v", name, responses[def], err)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d examples were messages", checked)
	}
}

// Hand-written 2025-11-25 session.
var session20251125 = []struct {
	dir, msg string
}{
	{ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"client","version":"1.0.0"}}}`},
	{ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"server","version":"1.0.0"}}}`},
	{ClientToServer, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	{ClientToServer, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
	{ServerToClient, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"get_weather","description":"Weather","inputSchema":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}]}}`},
	{ClientToServer, `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"get_weather","arguments":{"location":"Paris"},"_meta":{"progressToken":7}}}`},
	{ServerToClient, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":50,"total":100}}`},
	{ServerToClient, `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}`},
	{ClientToServer, `{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}`},
	{ServerToClient, `{"jsonrpc":"2.0","id":"call-1","result":{"content":[{"type":"text","text":"Sunny"}],"structuredContent":{"sky":"clear"},"isError":false}}`},
	{ClientToServer, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","task":{"ttl":60000}}}`},
	{ServerToClient, `{"jsonrpc":"2.0","id":3,"result":{"task":{"taskId":"t1","status":"working","createdAt":"2025-11-25T00:00:00Z","lastUpdatedAt":"2025-11-25T00:00:00Z","ttl":60000}}}`},
	{ServerToClient, `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
	{ClientToServer, `{"jsonrpc":"2.0","id":2,"result":{}}`},
	{ClientToServer, `{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"nope"}}`},
	{ServerToClient, `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Unknown prompt"}}`},
	{ServerToClient, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`},
	{ClientToServer, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1"}}`},
}

func TestSession20251125(t *testing.T) {
	c := Need(t, "2025-11-25")
	for _, m := range session20251125 {
		if err := c.Check([]byte(m.msg)); err != nil {
			t.Errorf("Check(%s): %v", m.msg, err)
		}
	}
	rec := &recorder{TB: t}
	observe := c.Observe(rec)
	for _, m := range session20251125 {
		observe(m.dir, []byte(m.msg))
	}
	if len(rec.errs) > 0 {
		t.Errorf("Observe reported:\n%s", strings.Join(rec.errs, "\n"))
	}
	if err := c.CheckResult("initialize", []byte(session20251125[1].msg)); err != nil {
		t.Errorf("CheckResult(initialize): %v", err)
	}
	if err := c.CheckResponse([]byte(session20251125[10].msg), []byte(session20251125[11].msg)); err != nil {
		t.Errorf("CheckResponse(task-augmented tools/call): %v", err)
	}
	tool := `{"name":"get_weather","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`
	if err := c.CheckDefinition("Tool", []byte(tool)); err != nil {
		t.Errorf("CheckDefinition(Tool): %v", err)
	}
}

func TestBrokenMessages(t *testing.T) {
	tests := []struct {
		rev, method, msg, want string
	}{
		{"2025-11-25", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":42}}`,
			"2025-11-25 CallToolRequest: /params/name: must be string, got number"},
		{"2025-11-25", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
			`2025-11-25 CallToolRequest: missing required property "params"`},
		{"2025-11-25", "", `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
			`2025-11-25 PingRequest: /jsonrpc: must be "2.0"`},
		{"2025-11-25", "", `{"jsonrpc":"2.0","id":true,"method":"ping"}`,
			`2025-11-25 PingRequest: /id: must be integer or string, got boolean`},
		{"2024-11-05", "", `{"jsonrpc":"2.0","id":true,"method":"ping"}`,
			`2024-11-05 JSONRPCRequest: /id: must be integer or string, got boolean`},
		// 2025-11-25 makes the id of an error response optional but not
		// nullable: a parse error must omit it.
		{"2025-11-25", "", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
			`2025-11-25 JSONRPCErrorResponse: /id: must be integer or string, got null`},
		{"2025-11-25", "", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`,
			`method "server/discover" does not exist in revision 2025-11-25`},
		{"2025-11-25", "", `{"jsonrpc":"2.0","id":1,"method":"notifications/initialized"}`,
			`method "notifications/initialized" is a notification in revision 2025-11-25, but the message has an id`},
		{"2025-11-25", "", `{"jsonrpc":"2.0","method":"ping"}`,
			`method "ping" is a request in revision 2025-11-25, but the message has no id`},
		{"2025-11-25", "", `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`,
			`2025-11-25 JSONRPCErrorResponse: /error/code: must be integer, got string`},
		{"2025-11-25", "", `{"jsonrpc":"2.0","id":1}`, "not a JSON-RPC message: no method, result or error"},
		{"2025-11-25", "", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "JSON-RPC batches are not allowed in revision 2025-11-25"},
		{"2025-03-26", "", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"nope"}]`,
			`batch member 1: method "nope" does not exist in revision 2025-03-26`},
		{"2025-11-25", "tools/call", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text"}]}}`,
			`2025-11-25 CallToolResult: /content/0: missing required property "text"`},
		{"2025-11-25", "tools/call", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"video"}]}}`,
			`2025-11-25 CallToolResult: /content/0/type: must be one of "text", "image", "audio", "resource_link", "resource"`},
		{"2025-11-25", "initialize", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}`,
			`2025-11-25 InitializeResult: missing required property "serverInfo"`},
		{"2025-11-25", "server/discover", `{"jsonrpc":"2.0","id":1,"result":{}}`,
			`method "server/discover" does not exist in revision 2025-11-25`},
		{"2026-07-28", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
			`method "initialize" does not exist in revision 2026-07-28`},
		{"2026-07-28", "", `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`,
			`method "sampling/createMessage" is not a JSON-RPC request in revision 2026-07-28 (CreateMessageRequest is not a member of ClientRequest)`},
		{"2026-07-28", "tools/list", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
			`2026-07-28 ListToolsResultResponse: /result: missing required properties "cacheScope", "resultType", "ttlMs"`},
		{"2024-11-05", "", `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}}`,
			`method "elicitation/create" does not exist in revision 2024-11-05`},
	}
	for _, tt := range tests {
		c := Need(t, tt.rev)
		var err error
		if tt.method == "" {
			err = c.Check([]byte(tt.msg))
		} else {
			err = c.CheckResult(tt.method, []byte(tt.msg))
		}
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s %s:\n got %v\nwant %s", tt.rev, tt.msg, err, tt.want)
		}
	}
	if err := Need(t, "2025-11-25").CheckDefinition("Nope", []byte(`{}`)); err == nil ||
		err.Error() != "definition Nope does not exist in revision 2025-11-25" {
		t.Errorf("CheckDefinition(Nope) = %v", err)
	}
}

func TestObserveReportsFailures(t *testing.T) {
	c := Need(t, "2025-11-25")
	rec := &recorder{TB: t}
	observe := c.Observe(rec)
	steps := []struct {
		dir, msg, want string // want: "" or a substring of the one failure reported
	}{
		{ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, ""},
		{ServerToClient, `{"jsonrpc":"2.0","id":"1","result":{"tools":[]}}`, `response id "1" matches no pending request sent client->server`},
		{ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"x"}]}}`, `ListToolsResult: /tools/0: missing required property "inputSchema"`},
		{ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`, "matches no pending request"}, // answered already
		{ClientToServer, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`, `clients do not send "notifications/message" in revision 2025-11-25`},
		{ServerToClient, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x"}}`, `servers do not send "tools/call"`},
		{ClientToServer, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, ""},
		{ClientToServer, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, "request id 5 is already in use"},
		{ServerToClient, `{"jsonrpc":"2.0","result":{}}`, "result response without an id"},
		{"sideways", `{"jsonrpc":"2.0","method":"ping"}`, `unknown direction "sideways"`},
	}
	for _, s := range steps {
		before := len(rec.errs)
		observe(s.dir, []byte(s.msg))
		got := rec.errs[before:]
		switch {
		case s.want == "" && len(got) > 0:
			t.Errorf("%s %s: unexpected failure %q", s.dir, s.msg, got)
		case s.want != "" && (len(got) != 1 || !strings.Contains(got[0], s.want) || !strings.Contains(got[0], "message: "+s.msg)):
			t.Errorf("%s %s: got %q, want one failure containing %q and the message", s.dir, s.msg, got, s.want)
		}
	}
}

func TestObserveConcurrent(t *testing.T) {
	c := Need(t, "2025-11-25")
	rec := &recorder{TB: t}
	observe := c.Observe(rec)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				id := fmt.Sprintf(`"%d-%d"`, i, j)
				observe(ClientToServer, []byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`))
				observe(ServerToClient, []byte(`{"jsonrpc":"2.0","id":`+id+`,"result":{}}`))
			}
		})
	}
	wg.Wait()
	if len(rec.errs) > 0 {
		t.Errorf("Observe reported: %q", rec.errs)
	}
}

func TestSchemaDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(SchemaDirEnv, dir)
	if got, err := SchemaDir(); got != dir || err != nil {
		t.Errorf("with $%s: SchemaDir() = %q, %v", SchemaDirEnv, got, err)
	}
	// Nothing is looked for beside the repository: the variable is the only way.
	t.Setenv(SchemaDirEnv, "")
	if _, err := SchemaDir(); !errors.Is(err, ErrNoSchemas) || !strings.Contains(err.Error(), SchemaDirEnv) {
		t.Errorf("without $%s: SchemaDir() = %v, want ErrNoSchemas naming the variable", SchemaDirEnv, err)
	}
	t.Setenv(SchemaDirEnv, filepath.Join(dir, "nope"))
	if _, err := SchemaDir(); err == nil || errors.Is(err, ErrNoSchemas) {
		t.Errorf("with a missing $%s: SchemaDir() = %v, want an error other than ErrNoSchemas", SchemaDirEnv, err)
	}
}

func TestLoadUnknownRevision(t *testing.T) {
	Dir(t)
	if _, err := Load("1999-01-01"); err == nil || !strings.Contains(err.Error(), "1999-01-01") {
		t.Errorf("Load(1999-01-01) = %v", err)
	}
}

// TestAbsentSchemas: without $MCPKIT_SCHEMA_DIR, For logs one line and
// returns a nil Checker that checks nothing, Need and Dir skip with that
// line; with $MCPKIT_REQUIRE_SCHEMAS=1 all three fail, and a variable
// naming no directory fails even without it. Each case uses a revision
// name of its own because Load remembers its answer per revision.
func TestAbsentSchemas(t *testing.T) {
	t.Setenv(SchemaDirEnv, "")
	t.Setenv(RequireEnv, "")
	tb := &fakeTB{TB: t, name: t.Name() + "/absent"}
	if c := For(tb, "absent-1"); c != nil {
		t.Fatalf("For without schemas = %v, want nil", c)
	}
	For(tb, "absent-1")
	if len(tb.logs) != 1 || !strings.Contains(tb.logs[0], SchemaDirEnv) || len(tb.skips)+len(tb.fatals) != 0 {
		t.Errorf("For twice without schemas: logs %q, skips %q, fatals %q; want one line naming %s",
			tb.logs, tb.skips, tb.fatals, SchemaDirEnv)
	}
	tb.cleanup()
	var c *Checker
	if c.Check([]byte(`{}`)) != nil || c.CheckResult("ping", nil) != nil || c.CheckResponse(nil, nil) != nil ||
		c.CheckDefinition("Tool", nil) != nil || c.Revision() != "" {
		t.Error("a nil Checker checked something")
	}
	c.Observe(t)(ClientToServer, []byte(`not JSON`))

	tb = &fakeTB{TB: t, name: t.Name() + "/need"}
	Need(tb, "absent-1")
	Dir(tb)
	if len(tb.skips) != 2 || !strings.Contains(tb.skips[0], SchemaDirEnv) || len(tb.fatals) != 0 {
		t.Errorf("Need and Dir without schemas: skips %q, fatals %q; want two skips", tb.skips, tb.fatals)
	}

	t.Setenv(RequireEnv, "1")
	tb = &fakeTB{TB: t, name: t.Name() + "/required"}
	For(tb, "absent-1")
	Need(tb, "absent-1")
	Dir(tb)
	if len(tb.fatals) != 3 || len(tb.skips)+len(tb.logs) != 0 {
		t.Errorf("with %s=1: fatals %q, skips %q, logs %q; want three failures", RequireEnv, tb.fatals, tb.skips, tb.logs)
	}

	t.Setenv(RequireEnv, "")
	t.Setenv(SchemaDirEnv, filepath.Join(t.TempDir(), "nope"))
	tb = &fakeTB{TB: t, name: t.Name() + "/wrong"}
	For(tb, "absent-2")
	if len(tb.fatals) != 1 || !strings.Contains(tb.fatals[0], "not a directory") {
		t.Errorf("with $%s naming nothing: fatals %q, want one", SchemaDirEnv, tb.fatals)
	}
	t.Setenv(SchemaDirEnv, t.TempDir())
	For(tb, "absent-3")
	if len(tb.fatals) != 2 || !strings.Contains(tb.fatals[1], "absent-3") {
		t.Errorf("with $%s missing the revision: fatals %q, want a second one", SchemaDirEnv, tb.fatals)
	}
}

// fakeTB records what For, Need and Dir report instead of acting on it.
type fakeTB struct {
	testing.TB
	name                string
	logs, skips, fatals []string
	cleanups            []func()
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Name() string      { return f.name }
func (f *fakeTB) Log(args ...any)   { f.logs = append(f.logs, fmt.Sprint(args...)) }
func (f *fakeTB) Skip(args ...any)  { f.skips = append(f.skips, fmt.Sprint(args...)) }
func (f *fakeTB) Fatal(args ...any) { f.fatals = append(f.fatals, fmt.Sprint(args...)) }
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) cleanup() {
	for _, fn := range f.cleanups {
		fn()
	}
}

// recorder captures the failures Observe reports.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func BenchmarkCheck(b *testing.B) {
	c, err := Load("2025-11-25")
	if err != nil {
		b.Fatal(err)
	}
	msg := []byte(session20251125[5].msg)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Check(msg); err != nil {
			b.Fatal(err)
		}
	}
}
