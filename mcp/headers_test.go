package mcp

import "testing"

func TestDecodeHeaderValue(t *testing.T) {
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
		got, ok := DecodeHeaderValue(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
