package main

import (
	"reflect"
	"testing"

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
