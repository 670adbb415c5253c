package jsonschema

import (
	"runtime"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestCompileShared: the same document compiles to one Schema while it
// is in use; a different document gets its own; the entry goes with the
// last user of its Schema.
func TestCompileShared(t *testing.T) {
	doc := jsontext.Value(`{"type":"object","properties":{"shared_test_a":{"type":"string"}}}`)
	a, err := Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Compile(append(jsontext.Value(nil), doc...))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("the same document compiled twice gave two Schemas")
	}
	c, err := Compile(jsontext.Value(`{"type":"object","properties":{"shared_test_b":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c == a {
		t.Fatal("two documents share a Schema")
	}
	if err := b.Validate(jsontext.Value(`{"shared_test_a":1}`)); err == nil {
		t.Fatal("the shared Schema accepts what it must refuse")
	}
	if lookupShared(doc) != a {
		t.Fatal("the entry is missing while its Schema is in use")
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	runtime.KeepAlive(c)
	a, b, c = nil, nil, nil
	// The entry leaves once the Schema is collected and its cleanup has
	// run; wait for that event (each GC gives it another chance).
	for i := 0; lookupShared(doc) != nil || hasKey(doc); i++ {
		if i == 1000 {
			t.Fatal("the entry of an unused Schema was never removed")
		}
		runtime.GC()
		runtime.Gosched()
	}
}

// TestCompileSharedError: a document that does not compile is not
// recorded.
func TestCompileSharedError(t *testing.T) {
	doc := jsontext.Value(`{"type":"object","$ref":"https://example.com/x.json"}`)
	for range 2 {
		if _, err := Compile(doc); err == nil {
			t.Fatal("an external $ref compiled")
		}
	}
	if hasKey(doc) {
		t.Fatal("a failed compile left an entry")
	}
}

func hasKey(doc []byte) bool {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	_, ok := shared.m[string(doc)]
	return ok
}
