package main

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

func TestParseArgs(t *testing.T) {
	got, err := parseArgs([]string{"a=2", "b=x y", "c=true", "d={\"k\":[1]}", "e=", "f=a=b"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": 2.0, "b": "x y", "c": true, "d": map[string]any{"k": []any{1.0}}, "e": "", "f": "a=b"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseArgs = %#v, want %#v", got, want)
	}
	for _, bad := range []string{"novalue", "=1"} {
		if _, err := parseArgs([]string{bad}); exitCode(err) != exitUsage {
			t.Errorf("parseArgs(%q): %v, want a usage error", bad, err)
		}
	}
}

func TestConvertAnswer(t *testing.T) {
	lo, hi := 1.0, 10.0
	two := int64(2)
	cases := []struct {
		schema mcp.PrimitiveSchema
		in     string
		want   any
		ok     bool
	}{
		{mcp.PrimitiveSchema{Type: "string"}, "hi", "hi", true},
		{mcp.PrimitiveSchema{Type: "string", MinLength: &two}, "h", nil, false},
		{mcp.PrimitiveSchema{Type: "string", Pattern: "^[a-z]+$"}, "abc", "abc", true},
		{mcp.PrimitiveSchema{Type: "string", Pattern: "^[a-z]+$"}, "ab1", nil, false},
		{mcp.PrimitiveSchema{Type: "string", Pattern: "(?<=x)y"}, "anything", "anything", true}, // not RE2: left to the server
		{mcp.PrimitiveSchema{Type: "string", Enum: []string{"a", "b"}}, "b", "b", true},
		{mcp.PrimitiveSchema{Type: "string", Enum: []string{"a", "b"}}, "c", nil, false},
		{mcp.PrimitiveSchema{Type: "string", OneOf: []mcp.EnumOption{{Const: "x", Title: "X"}}}, "x", "x", true},
		{mcp.PrimitiveSchema{Type: "number", Minimum: &lo, Maximum: &hi}, "2.5", 2.5, true},
		{mcp.PrimitiveSchema{Type: "number", Minimum: &lo}, "0", nil, false},
		{mcp.PrimitiveSchema{Type: "integer"}, "3", int64(3), true},
		{mcp.PrimitiveSchema{Type: "integer"}, "3.5", nil, false},
		{mcp.PrimitiveSchema{Type: "number"}, "many", nil, false},
		{mcp.PrimitiveSchema{Type: "boolean"}, "yes", true, true},
		{mcp.PrimitiveSchema{Type: "boolean"}, "n", false, true},
		{mcp.PrimitiveSchema{Type: "boolean"}, "maybe", nil, false},
		{mcp.PrimitiveSchema{Type: "array", Items: &mcp.EnumItems{Enum: []string{"r", "g", "b"}}}, "r, b", []any{"r", "b"}, true},
		{mcp.PrimitiveSchema{Type: "array", Items: &mcp.EnumItems{Enum: []string{"r"}}}, "x", nil, false},
		{mcp.PrimitiveSchema{Type: "array", MaxItems: new(int64(1))}, "a,b", nil, false},
	}
	for _, c := range cases {
		got, err := convertAnswer(&c.schema, c.in)
		if (err == nil) != c.ok || (c.ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("convertAnswer(%+v, %q) = %#v, %v; want %#v (ok=%v)", c.schema, c.in, got, err, c.want, c.ok)
		}
	}
}

// form runs the terminal form on schema with the lines of input typed in,
// and returns the result and everything the form wrote.
func form(t *testing.T, schema, input string) (*mcp.ElicitResult, string) {
	t.Helper()
	var out bytes.Buffer
	a := &asker{f: &clientFlags{}, interactive: true, in: newLineReader(strings.NewReader(input)), out: &out, mu: &sync.Mutex{}}
	p := &mcp.ElicitParams{Message: "Tell us", RequestedSchema: jsontext.Value(schema)}
	s, err := mcp.ParseElicitationSchema(p.RequestedSchema)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.askForm(context.Background(), p, s)
	if err != nil {
		t.Fatal(err)
	}
	return res, out.String()
}

func TestFormShowsConstraintsFirst(t *testing.T) {
	const schema = `{"type":"object","properties":{` +
		`"code":{"type":"string","minLength":2,"maxLength":5,"pattern":"^[A-Z]+$"},` +
		`"email":{"type":"string","format":"email"},` +
		`"age":{"type":"integer","minimum":18,"maximum":130},` +
		`"score":{"type":"number","minimum":0.5},` +
		`"color":{"type":"string","enum":["red","blue"]},` +
		`"tags":{"type":"array","minItems":1,"maxItems":2,"items":{"type":"string","enum":["a","b","c"]}}},` +
		`"required":["code","email","age","color","tags"]}`
	// code: empty, a pattern miss, then good; age: out of range, then
	// good; score skipped (optional, no default).
	res, out := form(t, schema, "\nab\nAB\nx@example.com\n7\n30\n\nred\na,b\n")
	if res.Action != mcp.ElicitActionAccept {
		t.Fatalf("action %q\n%s", res.Action, out)
	}
	want := map[string]any{"code": "AB", "email": "x@example.com", "age": int64(30), "color": "red", "tags": []any{"a", "b"}}
	if !reflect.DeepEqual(res.Content, want) {
		t.Errorf("content %#v, want %#v", res.Content, want)
	}
	// Each field's rules come before its prompt, and so before its
	// first error.
	for _, step := range []string{
		"(type !decline or !cancel to refuse)\n",
		"\ncode *required* [string]\n  must be: 2 to 5 characters; matching the pattern ^[A-Z]+$\ncode: ",
		"  a value is required\ncode: ",
		`  "ab" does not match the pattern ^[A-Z]+$` + "\ncode: ",
		"\nemail *required* [string]\n  must be: an email address (format email)\nemail: ",
		"\nage *required* [integer]\n  must be: from 18 to 130\nage: ",
		"  7 is below the minimum 18\nage: ",
		"\nscore [number]\n  must be: at least 0.5\n  optional: Enter leaves it out\nscore: ",
		"\ncolor *required* [string]\n  choices: red, blue\ncolor: ",
		"\ntags *required* [list, comma-separated]\n  choices: a, b, c\n  must be: 1 to 2 choices\ntags: ",
	} {
		i := strings.Index(out, step)
		if i < 0 {
			t.Fatalf("the form lacks, in order, %q:\n%s", step, out)
		}
		out = out[i+len(step):]
	}
	if strings.Contains(out, "[") {
		t.Errorf("a field without a default shows brackets: %q", out)
	}
}

func TestFormDefaults(t *testing.T) {
	// A required field without a default shows none; one with a default
	// shows it, and Enter takes it.
	res, out := form(t, `{"type":"object","properties":{"name":{"type":"string"},"plan":{"type":"string","default":"free"}},"required":["name","plan"]}`,
		"Ada\n\n")
	if !strings.Contains(out, "(Enter takes the default shown in brackets;") || !strings.Contains(out, "\nname: ") ||
		!strings.Contains(out, "\nplan [free]: ") || strings.Contains(out, "name [") {
		t.Errorf("form:\n%s", out)
	}
	if want := map[string]any{"name": "Ada", "plan": "free"}; !reflect.DeepEqual(res.Content, want) {
		t.Errorf("content %#v, want %#v", res.Content, want)
	}
	// End of input mid-form cancels.
	if res, _ := form(t, `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, ""); res.Action != mcp.ElicitActionCancel {
		t.Errorf("end of input: %q", res.Action)
	}
}

// TestAcceptDefaultsRequiredWithoutDefault: --accept-defaults on a form
// whose required field has no default fails naming the field, with its
// own exit code, not as a usage error (issue 34).
func TestAcceptDefaultsRequiredWithoutDefault(t *testing.T) {
	var out bytes.Buffer
	a := &asker{f: &clientFlags{acceptDefaults: true}, out: &out, mu: &sync.Mutex{}}
	p := &mcp.ElicitParams{Message: "Sign up", RequestedSchema: jsontext.Value(
		`{"type":"object","properties":{"plan":{"type":"string","default":"free"},"email":{"type":"string"}},"required":["plan","email"]}`)}
	_, err := a.elicit(context.Background(), p)
	if err == nil {
		t.Fatal("no error")
	}
	if code := exitCode(err); code != exitInput || code == exitUsage {
		t.Errorf("exit code %d, want %d", code, exitInput)
	}
	const want = `--accept-defaults cannot fill the server's form "Sign up": its required field "email" has no default; give it with --answer email=VALUE`
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestLogDataKeysSorted: structured log data prints with its object keys
// in sorted order at every depth, so the same data reads the same way
// each time (issue 34: the order changed from one message to the next).
func TestLogDataKeysSorted(t *testing.T) {
	data := map[string]any{}
	var keys []string
	for i := range 20 {
		k := fmt.Sprintf("k%02d", i)
		keys = append(keys, fmt.Sprintf("%q:%d", k, i))
		data[k] = i
	}
	data["nested"] = map[string]any{"b": 2, "a": 1, "c": 3}
	want := "[info] app: {" + strings.Join(keys, ",") + `,"nested":{"a":1,"b":2,"c":3}}` + "\n"
	for range 5 {
		var stderr bytes.Buffer
		c := &cli{stderr: &stderr}
		c.onLog(context.Background(), &mcp.LoggingMessageParams{Level: mcp.LevelInfo, Logger: "app", Data: data})
		if got := stderr.String(); got != want {
			t.Fatalf("log line\n%s\nwant\n%s", got, want)
		}
	}
}
