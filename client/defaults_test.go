package client

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func TestApplyElicitationDefaults(t *testing.T) {
	schema := jsontext.Value(`{"type":"object","properties":{
		"name":{"type":"string","default":"John Doe"},
		"age":{"type":"integer","default":30},
		"score":{"type":"number","default":95.5},
		"status":{"type":"string","enum":["active","inactive"],"default":"active"},
		"verified":{"type":"boolean","default":false},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"default":["a"]},
		"nickname":{"type":"string"},
		"odd":true
	}}`)
	in := map[string]any{"name": "Ada", "status": nil}
	out := ApplyElicitationDefaults(schema, in)
	got, err := json.Marshal(out, json.Deterministic(true))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"age":30,"name":"Ada","score":95.5,"status":null,"tags":["a"],"verified":false}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if len(in) != 2 {
		t.Errorf("the caller's content was modified: %v", in)
	}
	// No properties object: an unchanged copy; nil content is fine.
	if out := ApplyElicitationDefaults(jsontext.Value(`{"type":"object"}`), nil); out == nil || len(out) != 0 {
		t.Errorf("got %v, want an empty map", out)
	}
	if out := ApplyElicitationDefaults(jsontext.Value(`not json`), map[string]any{"a": 1}); len(out) != 1 {
		t.Errorf("got %v, want the content copied", out)
	}
}
