package jsonwalk

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// minimalCases: JSON texts and whether Minimal accepts them.
var minimalCases = []struct {
	v  string
	ok bool
}{
	{`{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}],"structuredContent":{"text":"hi"}}`, true},
	{`{}`, true}, {`[]`, true}, {`[{},[],""]`, true}, {`null`, true}, {`true`, true}, {`false`, true},
	{`"é\n\t\b\f\r\"\\/"`, true}, {`-0`, true}, {`1.50`, true}, {`1E2`, true}, {`-1e-2`, true}, {`{"a":{"a":1},"b":[1,{"a":2}]}`, true},
	{`{"a":1,"a":2}`, false}, {`{"a":{"b":1,"b":2}}`, false}, {`{"a":1} `, false}, {` 1`, false}, {`{"a": 1}`, false},
	{`"\u0041"`, false}, {`"\/"`, false}, {"\"\x01\"", false}, {"\"\xff\"", false}, {`01`, false}, {`1.`, false}, {`.5`, false},
	{`1e`, false}, {`+1`, false}, {`tru`, false}, {`nul`, false}, {`{"a"}`, false}, {`{"a":}`, false}, {`[1,]`, false},
	{`{,}`, false}, {`[1 2]`, false}, {`{]`, false}, {`[}`, false}, {`{"a":1`, false}, {`"abc`, false}, {`1 1`, false}, {``, false},
	{strings.Repeat("[", MinimalMaxDepth) + strings.Repeat("]", MinimalMaxDepth), true},
	{strings.Repeat("[", MinimalMaxDepth+1) + strings.Repeat("]", MinimalMaxDepth+1), false},
	{`"` + strings.Repeat("a", 1<<16) + `"`, true},
	{`{"ab":1,"a":2}`, true}, {`{"a":1,"ab":2}`, true}, {`{"a\"":1,"a\"":2}`, false}, {`{"a":{"a":1},"a":2}`, false},
	{names(MinimalMaxNames), true},
	{names(MinimalMaxNames + 1), false},
}

// names is an object of n members.
func names(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"n%d":%d`, i, i)
	}
	return "{" + b.String() + "}"
}

// TestMinimal: Minimal accepts valid JSON in the form
// json.Marshal writes a jsontext.Value, and only that.
func TestMinimal(t *testing.T) {
	for _, c := range minimalCases {
		if got := Minimal([]byte(c.v)); got != c.ok {
			t.Errorf("Minimal(%q) = %v, want %v", c.v, got, c.ok)
		}
		checkMinimal(t, []byte(c.v))
	}
}

// checkMinimal fails t if Minimal accepts v while IsValid refuses
// it or json.Marshal would write it differently.
func checkMinimal(t *testing.T, v []byte) {
	t.Helper()
	if !Minimal(v) {
		return
	}
	if !jsontext.Value(v).IsValid() {
		t.Fatalf("Minimal accepts %q, which IsValid refuses", v)
	}
	if out, err := json.Marshal(jsontext.Value(v)); err != nil || !bytes.Equal(out, v) {
		t.Fatalf("Minimal accepts %q, which json.Marshal writes as %q (%v)", v, out, err)
	}
}

// FuzzMinimal: whatever Minimal accepts is valid and written
// unchanged by json.Marshal.
func FuzzMinimal(f *testing.F) {
	for _, c := range minimalCases {
		f.Add([]byte(c.v))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		checkMinimal(t, v)
		// Read within a larger text, it stops where the value ends.
		w := Walker{B: append(append([]byte("["), v...), ",1]"...), I: 1}
		if (w.Minimal() && w.I == 1+len(v)) != Minimal(v) {
			t.Fatalf("Walker.Minimal and Minimal disagree on %q", v)
		}
	})
}
