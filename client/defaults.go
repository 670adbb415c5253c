package client

import (
	"maps"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ApplyElicitationDefaults returns a copy of content in which every
// property of the requested schema that content omits and whose schema
// has a "default" takes that default (SEP-1034). Provided values are
// never overwritten, not even a null; a false or zero default is applied
// like any other; the default's JSON is kept verbatim (30 stays the
// integer 30); a property without a default stays absent. A schema
// without a "properties" object leaves the copy unchanged.
func ApplyElicitationDefaults(schema jsontext.Value, content map[string]any) map[string]any {
	out := make(map[string]any, len(content))
	maps.Copy(out, content)
	var s struct {
		Properties map[string]jsontext.Value `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return out
	}
	for name, prop := range s.Properties {
		if _, present := out[name]; present {
			continue
		}
		var p struct {
			Default jsontext.Value `json:"default"`
		}
		if prop.Kind() != '{' || json.Unmarshal(prop, &p) != nil || p.Default == nil {
			continue
		}
		out[name] = p.Default
	}
	return out
}
