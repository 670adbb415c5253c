package tasks

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

func TestHasMethod(t *testing.T) {
	for _, tc := range []struct {
		r    Rules
		v    string
		name string
		want bool
	}{
		{Core{}, "2025-11-25", mcp.MethodTasksList, true},
		{Core{}, "2025-11-25", mcp.MethodTasksResult, true},
		{Core{}, "2025-11-25", mcp.MethodTasksUpdate, false},
		{Core{}, "2025-06-18", mcp.MethodTasksGet, false},
		{Extension{}, "2026-07-28", mcp.MethodTasksUpdate, true},
		{Extension{}, "2026-07-28", mcp.MethodTasksList, false},
		{Extension{}, "2026-07-28", mcp.MethodTasksResult, false},
	} {
		if got := tc.r.HasMethod(tc.v, tc.name); got != tc.want {
			t.Errorf("%T.HasMethod(%s, %s) = %v, want %v", tc.r, tc.v, tc.name, got, tc.want)
		}
	}
}

func code(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func TestEligible(t *testing.T) {
	task := &mcp.CallToolParams{Task: &mcp.TaskMetadata{}}
	plain := &mcp.CallToolParams{}
	for _, tc := range []struct {
		name     string
		r        Rules
		v        string
		declared bool
		support  string
		p        *mcp.CallToolParams
		ok       bool
		code     int64
	}{
		{"core task asked", Core{}, "2025-11-25", false, mcp.TaskSupportOptional, task, true, 0},
		{"core forbidden", Core{}, "2025-11-25", false, mcp.TaskSupportForbidden, task, false, 0},
		{"core no params.task", Core{}, "2025-11-25", false, mcp.TaskSupportOptional, plain, false, 0},
		{"core required without params.task", Core{}, "2025-11-25", false, mcp.TaskSupportRequired, plain, false, mcp.CodeMethodNotFound},
		{"core required, old revision", Core{}, "2025-06-18", false, mcp.TaskSupportRequired, task, false, mcp.CodeMethodNotFound},
		{"ext declared", Extension{}, "2026-07-28", true, mcp.TaskSupportOptional, plain, true, 0},
		{"ext not declared", Extension{}, "2026-07-28", false, mcp.TaskSupportOptional, plain, false, 0},
		{"ext required, not declared", Extension{}, "2026-07-28", false, mcp.TaskSupportRequired, plain, false, mcp.CodeMissingRequiredClientCapability},
		{"ext forbidden", Extension{}, "2026-07-28", true, mcp.TaskSupportForbidden, plain, false, 0},
	} {
		ok, err := tc.r.Eligible(tc.v, tc.declared, "t", tc.support, tc.p)
		if ok != tc.ok || code(err) != tc.code {
			t.Errorf("%s: Eligible = %v, %v; want %v, code %d", tc.name, ok, err, tc.ok, tc.code)
		}
	}
	if err := (Extension{}).Check(false); code(err) != mcp.CodeMissingRequiredClientCapability {
		t.Errorf("Extension.Check(false) = %v, want -32021", err)
	}
	if err := (Extension{}).Check(true); err != nil {
		t.Errorf("Extension.Check(true) = %v", err)
	}
	if e := MissingExtension(); !strings.Contains(string(e.Data), mcp.ExtensionTasks) {
		t.Errorf("MissingExtension data = %s, want the extension named", e.Data)
	}
}

func TestTTL(t *testing.T) {
	short, long := int64(1000), int64(60_000)
	for _, tc := range []struct {
		r    Rules
		p    *mcp.CallToolParams
		want time.Duration
	}{
		{Core{}, &mcp.CallToolParams{Task: &mcp.TaskMetadata{TTL: &short}}, time.Second},
		{Core{}, &mcp.CallToolParams{Task: &mcp.TaskMetadata{TTL: &long}}, 30 * time.Second},
		{Core{}, &mcp.CallToolParams{}, 30 * time.Second},
		{Extension{}, &mcp.CallToolParams{Task: &mcp.TaskMetadata{TTL: &short}}, 30 * time.Second},
	} {
		if got := tc.r.TTL(tc.p, 30*time.Second); got != tc.want {
			t.Errorf("%T.TTL = %v, want %v", tc.r, got, tc.want)
		}
	}
}

func TestRender(t *testing.T) {
	at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.FixedZone("x", 3600))
	rec := &store.TaskRecord{ID: "task-a-b", Status: mcp.TaskCompleted, CreatedAt: at, LastUpdatedAt: at,
		TTL: 2 * time.Second, Result: jsontext.Value(`{"content":[]}`), Modern: true}
	d, ok := For(rec).Render(rec).(*mcp.DetailedTask)
	if !ok || d.Result == nil || d.CreatedAt != "2026-07-28T11:00:00Z" || d.TTLMs == nil || *d.TTLMs != 2000 || d.PollIntervalMs != nil {
		t.Errorf("modern render = %+v", d)
	}
	rec.Modern = false
	c, ok := For(rec).Render(rec).(*mcp.Task)
	if !ok || c.TaskID != rec.ID || c.TTL == nil || *c.TTL != 2000 {
		t.Errorf("core render = %+v", c)
	}
	if _, ok := (Core{}).Created(rec).(*mcp.CreateTaskResult); !ok {
		t.Error("Core.Created is not a CreateTaskResult")
	}
	if r, ok := (Extension{}).Created(rec).(*mcp.CreatedTaskResult); !ok || r.ResultType != mcp.ResultTask {
		t.Errorf("Extension.Created = %+v", r)
	}
}

func TestIDs(t *testing.T) {
	id := NewID("inst1")
	if OwnerOf(id) != "inst1" || id == NewID("inst1") {
		t.Errorf("NewID = %q, owner %q", id, OwnerOf(id))
	}
	for _, bad := range []string{"", "task-", "task-x", "other-x-y"} {
		if o := OwnerOf(bad); o != "" {
			t.Errorf("OwnerOf(%q) = %q, want none", bad, o)
		}
	}
	for _, tc := range []struct {
		recP, recS, p, s string
		want             bool
	}{
		{"alice", "s1", "alice", "s2", true},
		{"alice", "", "mallory", "", false},
		{"", "s1", "", "s1", true},
		{"", "s1", "", "s2", false},
		{"", "", "", "", true},
		{"", "", "alice", "", false},
	} {
		rec := &store.TaskRecord{Principal: tc.recP, SessionID: tc.recS}
		if got := BoundTo(rec, tc.p, tc.s); got != tc.want {
			t.Errorf("BoundTo(%+v, %q, %q) = %v, want %v", tc, tc.p, tc.s, got, tc.want)
		}
	}
}

func TestRelated(t *testing.T) {
	out := string(WithRelated(jsontext.Value(`{"a":1,"_meta":{"k":"v"}}`), "t1"))
	if !strings.Contains(out, `"k":"v"`) || !strings.Contains(out, `"`+mcp.MetaKeyRelatedTask+`":{"taskId":"t1"}`) || !strings.Contains(out, `"a":1`) {
		t.Errorf("WithRelated = %s", out)
	}
	if out := string(WithRelated(jsontext.Value(`[1]`), "t1")); out != `[1]` {
		t.Errorf("WithRelated of an array = %s, want it unchanged", out)
	}
	in := mcp.ProgressParams{Progress: 1, Meta: mcp.Meta{"k": "v"}}
	p := WithRelatedMeta(in, "t1").(mcp.ProgressParams)
	if _, ok := p.Meta[mcp.MetaKeyRelatedTask]; !ok || len(in.Meta) != 1 {
		t.Errorf("WithRelatedMeta = %+v (caller's meta %+v)", p.Meta, in.Meta)
	}
	total := 4.0
	if s := ProgressText(mcp.ProgressParams{Progress: 1.5, Total: &total, Message: "copying"}); s != "copying (1.5/4)" {
		t.Errorf("ProgressText = %q", s)
	}
	if s := ProgressText(mcp.ProgressParams{Progress: 2}); s != "progress 2" {
		t.Errorf("ProgressText = %q", s)
	}
}

func TestClock(t *testing.T) {
	var zero Clock
	if zero.Now().IsZero() {
		t.Error("the zero Clock has no time")
	}
	at := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC)
	var gotD time.Duration
	c := Clock{NowFunc: func() time.Time { return at }, AfterFuncFunc: func(d time.Duration, f func()) func() bool {
		gotD = d
		return func() bool { return true }
	}}
	if !c.Now().Equal(at) || !c.AfterFunc(time.Minute, func() {})() || gotD != time.Minute {
		t.Error("Clock does not use its functions")
	}
	fired := make(chan struct{})
	zero.AfterFunc(0, func() { close(fired) })
	<-fired
}

// TestPeerMsgJSON: instances of different builds exchange PeerMsg; its
// member names and omitted zero members stay as they were in server.
func TestPeerMsgJSON(t *testing.T) {
	raw, err := json.Marshal(PeerMsg{Op: OpNotify, Task: "t1", From: "a", Method: "m", Params: jsontext.Value(`{}`)})
	if err != nil || string(raw) != `{"op":"notify","task":"t1","from":"a","method":"m","params":{}}` {
		t.Errorf("PeerMsg = %s, %v", raw, err)
	}
	raw, err = json.Marshal(PeerReply{Gone: true})
	if err != nil || string(raw) != `{"gone":true}` {
		t.Errorf("PeerReply = %s, %v", raw, err)
	}
}
