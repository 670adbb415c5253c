package mcp

import (
	"reflect"
	"strings"
	"testing"
)

// sep1330Schema holds every enum shape of SEP-1330 and SEP-1034 defaults,
// in an order that is not alphabetical.
const sep1330Schema = `{"type":"object","properties":{` +
	`"zName":{"type":"string","title":"Name","minLength":1,"maxLength":50,"default":"octocat"},` +
	`"age":{"type":"integer","minimum":0,"maximum":150,"default":0},` +
	`"ok":{"type":"boolean","default":false},` +
	`"color":{"type":"string","enum":["Red","Green"],"default":"Red"},` +
	`"titled":{"type":"string","oneOf":[{"const":"#F00","title":"Red"}],"default":"#F00"},` +
	`"multi":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["a","b"]},"default":["a"]},` +
	`"multiTitled":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]},"default":[]},` +
	`"legacy":{"type":"string","enum":["x","y"],"enumNames":["X","Y"]},` +
	`"email":{"type":"string","format":"email","pattern":"^.+@.+$"}` +
	`},"required":["zName","age"]}`

func TestElicitationSchema(t *testing.T) {
	s, err := ParseElicitationSchema([]byte(sep1330Schema))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range s.Properties {
		names = append(names, p.Name)
	}
	want := []string{"zName", "age", "ok", "color", "titled", "multi", "multiTitled", "legacy", "email"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("property order = %v", names)
	}
	raw, err := s.Raw()
	if err != nil || string(raw) != sep1330Schema {
		t.Errorf("re-encoded (%v):\n%s\n%s", err, raw, sep1330Schema)
	}
	if _, err := ParseElicitationSchema([]byte(`{"type":"array","properties":{}}`)); err == nil || !strings.Contains(err.Error(), "object") {
		t.Errorf("non-object schema: %v", err)
	}
	built := ElicitationSchema{Properties: SchemaProperties{{"b", PrimitiveSchema{Type: "boolean", Default: true}}, {"a", PrimitiveSchema{Type: "number", Minimum: new(0.0)}}}}
	if raw, _ := built.Raw(); string(raw) != `{"type":"object","properties":{"b":{"type":"boolean","default":true},"a":{"type":"number","minimum":0}}}` {
		t.Errorf("built = %s", raw)
	}
}

func TestElicitParamsModes(t *testing.T) {
	form := ElicitParams{Message: "m", RequestedSchema: []byte(`{"type":"object","properties":{}}`)}
	if form.EffectiveMode() != ElicitModeForm {
		t.Error(form.EffectiveMode())
	}
	raw := []byte(`{"mode":"url","message":"m","url":"https://x","elicitationId":"e1"}`)
	var url ElicitParams
	roundTrip(t, raw, &url)
	if url.EffectiveMode() != ElicitModeURL || url.ElicitationID != "e1" {
		t.Errorf("%+v", url)
	}
	data := []byte(`{"elicitations":[` + string(raw) + `]}`)
	roundTrip(t, data, new(URLElicitationRequiredData))
}

func TestElicitationCapability(t *testing.T) {
	for _, tc := range []struct {
		in        string
		form, url bool
	}{
		{`{"elicitation":{}}`, true, false},
		{`{"elicitation":{"url":{}}}`, false, true},
		{`{"elicitation":{"form":{},"url":{}}}`, true, true},
		{`{"elicitation":{"form":{"applyDefaults":true}}}`, true, false},
		{`{}`, false, false},
	} {
		var c ClientCapabilities
		roundTrip(t, []byte(tc.in), &c)
		if c.Elicitation.SupportsForm() != tc.form || c.Elicitation.SupportsURL() != tc.url {
			t.Errorf("%s: form=%v url=%v", tc.in, c.Elicitation.SupportsForm(), c.Elicitation.SupportsURL())
		}
	}
}

func TestTasksCapability(t *testing.T) {
	var c ServerCapabilities
	roundTrip(t, []byte(`{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`), &c)
	if !c.Tasks.SupportsRequest(MethodToolsCall) || c.Tasks.SupportsRequest(MethodSamplingCreateMessage) || c.Tasks.List == nil {
		t.Errorf("%+v", c.Tasks)
	}
	var none *TasksCapability
	if none.SupportsRequest(MethodToolsCall) {
		t.Error("nil tasks capability supports a request")
	}
	var task CreateTaskResult
	roundTrip(t, []byte(`{"task":{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttl":null}}`), &task)
}
