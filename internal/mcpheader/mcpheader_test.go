package mcpheader

import (
	"strings"
	"testing"
)

func mustDecode(t *testing.T, v string) string {
	t.Helper()
	s, ok := Decode(v)
	if !ok {
		t.Fatalf("header %q does not decode", v)
	}
	return s
}

func TestEncode(t *testing.T) {
	for _, tc := range []struct {
		in     string
		base64 bool
	}{
		{"us-west1", false}, {"", false}, {"us west 1", false}, {"test-method", false},
		{"file:///path/to/file%20name.txt", false}, {"https://example.com/resource?id=123", false},
		{"SELECT * FROM users", false}, {"a=?b?=c", false},
		{" padded ", true}, {" us-west1", true}, {"us-west1 ", true}, {"line1\nline2", true},
		{"line1\r\nline2", true}, {"\tindented", true}, {"Hello, 世界", true}, {"caf\xc3\xa9", true},
		{"\x7f", true}, {"=?base64?SGk=?=", true}, {"=?BASE64?SGk=?=", true},
	} {
		got := Encode(tc.in)
		if isB64 := strings.HasPrefix(got, "=?base64?"); isB64 != tc.base64 {
			t.Errorf("%q → %q: base64 %v, want %v", tc.in, got, isB64, tc.base64)
		}
		if tc.base64 && mustDecode(t, got) != tc.in {
			t.Errorf("%q → %q does not decode back", tc.in, got)
		}
		if !tc.base64 && got != tc.in {
			t.Errorf("%q → %q, want it as is", tc.in, got)
		}
	}
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"get_weather", "get_weather", true},
		{"=?base64?w6l0w6k=?=", "été", true},
		{"=?base64??=", "", true},
		{"=?base64?w6l0w6k?=", "", false}, // unpadded: not strict base64
		{"=?base64?***?=", "", false},
		{"=?base64?abc", "=?base64?abc", true}, // no sentinel: the value itself
	} {
		got, ok := Decode(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Decode(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestIsToken: the header-name rule.
func TestIsToken(t *testing.T) {
	for s, want := range map[string]bool{"Mcp-Param-Region": true, "x_y": true, "": false, "a b": false, "a:b": false, "é": false} {
		if got := IsToken(s); got != want {
			t.Errorf("IsToken(%q) = %v", s, got)
		}
	}
}
