package mcp

import (
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// TestCapabilitiesClone: a clone shares nothing with its original — every
// map, pointer and raw value may be changed without the original seeing
// it.
func TestCapabilitiesClone(t *testing.T) {
	cc := ClientCapabilities{
		Experimental: map[string]jsontext.Value{"x": jsontext.Value(`{"a":1}`)},
		Roots:        &RootsCapability{ListChanged: true},
		Sampling:     &SamplingCapability{Context: &struct{}{}, Tools: &struct{}{}},
		Elicitation:  &ElicitationCapability{Form: &FormElicitationCapability{ApplyDefaults: true}, URL: &struct{}{}},
		Tasks:        &TasksCapability{List: &struct{}{}, Cancel: &struct{}{}, Requests: map[string]map[string]struct{}{"tools": {"call": {}}}},
		Extensions:   map[string]jsontext.Value{"com.example/x": jsontext.Value(`{"b":2}`)},
	}
	before, _ := json.Marshal(cc)
	c := cc.Clone()
	if got, _ := json.Marshal(c); string(got) != string(before) {
		t.Fatalf("clone %s, want %s", got, before)
	}
	c.Experimental["y"] = nil
	c.Experimental["x"][1] = ' '
	c.Extensions["com.example/y"] = nil
	c.Extensions["com.example/x"][1] = ' '
	c.Roots.ListChanged = false
	c.Sampling.Tools = nil
	c.Elicitation.Form.ApplyDefaults = false
	c.Elicitation.URL = nil
	c.Tasks.Requests["tools"]["list"] = struct{}{}
	c.Tasks.Requests["sampling"] = nil
	c.Tasks.List = nil
	if after, _ := json.Marshal(cc); string(after) != string(before) {
		t.Errorf("changing the clone changed the original:\n%s\nwas\n%s", after, before)
	}

	sc := ServerCapabilities{
		Experimental: map[string]jsontext.Value{"x": jsontext.Value(`{}`)},
		Logging:      &struct{}{}, Completions: &struct{}{},
		Prompts: &PromptsCapability{ListChanged: true}, Resources: &ResourcesCapability{Subscribe: true},
		Tools: &ToolsCapability{ListChanged: true}, Tasks: &TasksCapability{Requests: map[string]map[string]struct{}{"tools": {"call": {}}}},
		Extensions: map[string]jsontext.Value{"e/x": jsontext.Value(`{}`)},
	}
	before, _ = json.Marshal(sc)
	s := sc.Clone()
	s.Prompts.ListChanged, s.Resources.Subscribe, s.Tools.ListChanged = false, false, false
	s.Tasks.Requests["tools"]["list"] = struct{}{}
	s.Extensions["e/y"], s.Experimental["y"] = nil, nil
	if after, _ := json.Marshal(sc); string(after) != string(before) {
		t.Errorf("changing the server clone changed the original:\n%s\nwas\n%s", after, before)
	}
	var zero ClientCapabilities
	if z := zero.Clone(); z.Extensions != nil || z.Roots != nil || z.Tasks != nil {
		t.Errorf("the zero value's clone is not zero: %+v", z)
	}

	impl := Implementation{Name: "n", Icons: []Icon{{Src: "data:,", Sizes: []string{"48x48"}}}}
	ic := impl.Clone()
	ic.Icons[0].Sizes[0], ic.Icons[0].Src = "any", "x"
	if impl.Icons[0].Sizes[0] != "48x48" || impl.Icons[0].Src != "data:," {
		t.Errorf("changing the Implementation clone changed the original: %+v", impl)
	}
}
