package jsontok

import (
	"strings"
	"testing"
)

func TestDecoder(t *testing.T) {
	data := []byte(` {"a\u0062":[1, 2],"c":"x"} `)
	d := New(data)
	defer d.Release()
	if _, err := d.ReadToken(); err != nil {
		t.Fatal(err)
	}
	var names, raws []string
	for d.PeekKind() != '}' {
		n, err := d.Name()
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.Raw()
		if err != nil {
			t.Fatal(err)
		}
		if cap(v) != len(v) {
			t.Errorf("raw %q has spare capacity %d", v, cap(v)-len(v))
		}
		names, raws = append(names, string(n)), append(raws, string(v))
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, ","); got != "ab,c" {
		t.Errorf("names %s", got)
	}
	if got := strings.Join(raws, ";"); got != `[1, 2];"x"` {
		t.Errorf("raw values %s (want them as written)", got)
	}
}

func TestEndRejectsTrailingData(t *testing.T) {
	for _, in := range []string{`{} {}`, `{} x`, `{`} {
		d := New([]byte(in))
		_, _ = d.ReadToken()
		if err := d.End(); err == nil {
			t.Errorf("End accepted %q", in)
		}
		d.Release()
	}
}
