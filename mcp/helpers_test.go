package mcp

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// member returns the raw JSON at a dotted path of object members.
func member(t *testing.T, raw jsontext.Value, path string) (jsontext.Value, bool) {
	t.Helper()
	for name := range strings.SplitSeq(path, ".") {
		var obj map[string]jsontext.Value
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("member %q: %v", path, err)
		}
		var ok bool
		if raw, ok = obj[name]; !ok {
			return nil, false
		}
	}
	return raw, true
}

// defaultFalse lists members whose schema default is false, so that an
// explicit false and an absent member mean the same thing.
var defaultFalse = map[string]bool{"isError": true, "hasMore": true}

// normalize drops members equal to their schema default, recursively.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if defaultFalse[k] && e == false {
				delete(v, k)
				continue
			}
			v[k] = normalize(e)
		}
	case []any:
		for i, e := range v {
			v[i] = normalize(e)
		}
	}
	return v
}

// assertSameJSON fails unless want and got decode to equal generic values.
func assertSameJSON(t *testing.T, want, got []byte) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("decode want: %v", err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("decode got: %v\n%s", err, got)
	}
	if !reflect.DeepEqual(normalize(w), normalize(g)) {
		t.Errorf("JSON differs\nwant: %s\ngot:  %s", compactJSON(want), got)
	}
}

// roundTrip decodes raw into v, re-encodes it, checks semantic equality and
// returns the encoding.
func roundTrip(t *testing.T, raw []byte, v any) []byte {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("unmarshal %T: %v", v, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	assertSameJSON(t, raw, out)
	return out
}

// compactJSON removes whitespace outside strings, without using jsontext, so
// it can serve as an independent oracle for byte-exact comparisons.
func compactJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inStr, esc := false, false
	for _, c := range b {
		switch {
		case inStr:
			out = append(out, c)
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			if c == '"' {
				inStr = true
			}
			out = append(out, c)
		}
	}
	return out
}
