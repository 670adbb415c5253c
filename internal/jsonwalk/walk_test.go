package jsonwalk

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// scalarSeeds are strings, numbers and literals, valid and not.
var scalarSeeds = []string{
	`""`, `"a"`, `"é日本"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\u003c"`, `"\uD83D\uDE00"`, `"\ud800"`, `"\udc00"`,
	`"\ud800\u0041"`, `"\ud800x"`, `"\u12G4"`, `"\u12"`, `"\x"`, "\"a\tb\"", "\"\xff\"", "\"\xed\xa0\x80\"", `"abc`, `"\`,
	`0`, `-0`, `1`, `-12.5e+3`, `1E-2`, `01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `0x1`, `1.5e3.2`,
	`true`, `false`, `null`, `tru`, `nul`, `True`, `truex`,
}

// skipSeeds are containers for Skip, strings with brackets and escaped
// quotes among them.
var skipSeeds = []string{`{"a":[1,"x\\\"]",{"b":null}],"c":"\\"}`, `[]`, `{}`, `[{"a":"}"}]`, `"\\"`, `-1.5e3`, `true`}

// TestSkip: Skip passes over exactly one value, followed by a comma.
func TestSkip(t *testing.T) {
	for _, s := range skipSeeds {
		if w := (Walker{B: []byte(s + ",")}); !w.Skip() || w.I != len(s) {
			t.Errorf("Skip over %q stops at %d", s, w.I)
		}
	}
}

// FuzzScalars: a string, number or literal read to the end of its text
// is exactly what jsontext calls valid: the walk refuses nothing valid
// and takes nothing invalid. Skip passes over exactly one valid value.
func FuzzScalars(f *testing.F) {
	for _, s := range append(scalarSeeds, skipSeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ok := readsWhole(s)
		bare := len(s) > 0 && strings.Trim(s, " \t\r\n") == s && s[0] != '{' && s[0] != '['
		if valid := bare && jsontext.Value(s).IsValid(); ok != valid {
			t.Fatalf("%q: the walk says %v, jsontext %v", s, ok, valid)
		}
		// Skip passes over exactly one value of valid text, whatever it is.
		if len(s) > 0 && strings.Trim(s, " \t\r\n") == s && jsontext.Value(s).IsValid() {
			if w := (Walker{B: []byte(s + ",")}); !w.Skip() || w.I != len(s) {
				t.Fatalf("Skip over %q stops at %d", s, w.I)
			}
		}
		// Plain takes a string without escapes: the same string.
		w := Walker{B: []byte(s)}
		if contents, ok := w.Plain(); ok {
			str := s[:w.I]
			if !jsontext.Value(str).IsValid() || strings.Contains(str, `\`) || string(contents) != str[1:len(str)-1] {
				t.Fatalf("Plain(%q) = %q", s, contents)
			}
		}
	})
}

// readsWhole reports whether s is one string, number or literal, read by
// the walk to its end.
func readsWhole(s string) bool {
	w := Walker{B: []byte(s)}
	var ok bool
	switch w.Peek() {
	case '"':
		ok = w.String()
	case 't', 'f', 'n':
		ok = w.Literal()
	default:
		_, ok = w.Number()
	}
	return ok && w.I == len(s)
}

func TestScalars(t *testing.T) {
	for _, s := range scalarSeeds {
		if ok := readsWhole(s); ok != jsontext.Value(s).IsValid() {
			t.Errorf("%q: the walk says %v, jsontext %v", s, ok, !ok)
		}
	}
}

// TestPlain: a string without escapes gives its contents; one with an
// escape is left.
func TestPlain(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`"abc" x`, "abc", true},
		{`"é"`, "é", true},
		{`"a\nb"`, "", false},
		{"\"a\x01\"", "", false},
		{"\"\xff\"", "", false},
		{`"abc`, "", false},
		{`abc`, "", false},
	} {
		w := Walker{B: []byte(c.in)}
		got, ok := w.Plain()
		if ok != c.ok || string(got) != c.want || (ok && w.I != len(c.want)+2) {
			t.Errorf("Plain(%q) = %q, %v (at %d)", c.in, got, ok, w.I)
		}
	}
}

// TestText: a string's value, escapes decoded; the position after it.
func TestText(t *testing.T) {
	for _, c := range []struct {
		in, want string
		end      int
		ok       bool
	}{
		{`"abc" x`, "abc", 5, true},
		{`"a\nb\u00e9",`, "a\nbé", 12, true},
		{`"\ud800"`, "", 0, false},
		{"\"a\x01\"", "", 0, false},
		{`"abc`, "", 0, false},
		{`1`, "", 0, false},
	} {
		w := Walker{B: []byte(c.in)}
		got, ok := w.Text()
		if ok != c.ok || string(got) != c.want || (ok && w.I != c.end) {
			t.Errorf("Text(%q) = %q, %v (at %d)", c.in, got, ok, w.I)
		}
	}
}

// TestStructure: Open, Colon, Next and End over an object and an array.
func TestStructure(t *testing.T) {
	w := Walker{B: []byte(` { "a" : [ 1 , 2 ] , "b":{} } `)}
	w.Space()
	if w.Open('}') {
		t.Fatal("an object with members read as empty")
	}
	if name, ok := w.Plain(); !ok || string(name) != "a" || !w.Colon() {
		t.Fatalf("first member: %q %v", name, ok)
	}
	if w.Open(']') {
		t.Fatal("a full array read as empty")
	}
	for i := 0; ; i++ {
		if _, ok := w.Number(); !ok {
			t.Fatalf("element %d", i)
		}
		more, ok := w.Next(']')
		if !ok {
			t.Fatalf("after element %d", i)
		}
		if !more {
			break
		}
	}
	if more, ok := w.Next('}'); !more || !ok {
		t.Fatal("no second member")
	}
	if name, ok := w.Plain(); !ok || string(name) != "b" || !w.Colon() || !w.Open('}') {
		t.Fatal("second member")
	}
	if more, ok := w.Next('}'); more || !ok || !w.End() {
		t.Fatalf("the object's end: more %v ok %v at %d", more, ok, w.I)
	}
	if w := (Walker{B: []byte(`[1 2]`)}); !w.Open(']') {
		w.Number()
		if _, ok := w.Next(']'); ok {
			t.Error("two elements without a comma read")
		}
	}
}
