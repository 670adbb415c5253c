package jsonschema

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestValidationErrorNamesEveryFailure: the message names each failure,
// not the first and a count (issue 34: `missing required property "b"
// (and 1 more)` hid the other problem).
func TestValidationErrorNamesEveryFailure(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"},"c":{"type":"string","maxLength":2}},"required":["a","b","d"]}`)
	for instance, want := range map[string]string{
		`{"a":"x"}`:                      `missing required properties "b", "d"; /a: must be number, got string`,
		`{"a":1,"b":2,"d":0,"c":"long"}`: `/c: must be at most 2 characters long`,
		`{"c":"long","d":0}`:             `missing required properties "a", "b"; /c: must be at most 2 characters long`,
	} {
		err := s.Validate(jsontext.Value(instance))
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", instance, err, want)
		}
	}
}

// TestValidationErrorListBounded: an instance that fails everywhere names
// the first 1+maxListed failures and counts the rest.
func TestValidationErrorListBounded(t *testing.T) {
	s := mustCompile(t, `{"type":"array","items":{"type":"integer"}}`)
	items := make([]string, 40)
	for i := range items {
		items[i] = `"x"`
	}
	err := s.Validate(jsontext.Value("[" + strings.Join(items, ",") + "]"))
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if got := strings.Count(msg, "must be integer, got string"); got != 1+maxListed {
		t.Errorf("%d failures named, want %d: %s", got, 1+maxListed, msg)
	}
	if want := fmt.Sprintf(" (and %d more)", 40-1-maxListed); !strings.HasSuffix(msg, want) {
		t.Errorf("message %q does not end with %q", msg, want)
	}
	if !strings.HasPrefix(msg, "/0: must be integer, got string; /1: ") {
		t.Errorf("message %q does not start with the first items in order", msg)
	}
}
