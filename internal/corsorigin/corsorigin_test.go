package corsorigin

import (
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	named := Parse([]string{" https://App.example.com/ ", "null", "", "http://localhost:3000"})
	wild := Parse([]string{"*"})
	for _, c := range []struct {
		l            List
		origin       string
		ok, explicit bool
	}{
		{named, "https://app.example.com", true, true},
		{named, "HTTPS://APP.EXAMPLE.COM", true, true},
		{named, "http://localhost:3000", true, true},
		{named, "http://localhost:3001", false, false},
		{named, "null", false, false},
		{named, "", false, false},
		{wild, "https://any.example", true, false},
		{wild, "http://127.0.0.1:8080", true, false},
		{wild, "null", false, false},
		{wild, "file://", false, false},
		{wild, "https://u@evil.example", false, false},
		{wild, "https://a.example/path", false, false},
		{List{}, "https://app.example.com", false, false},
	} {
		ok, explicit := c.l.Match(c.origin)
		if ok != c.ok || explicit != c.explicit {
			t.Errorf("Match(%q) = %v, %v; want %v, %v", c.origin, ok, explicit, c.ok, c.explicit)
		}
	}
}

func TestIsToken(t *testing.T) {
	for s, want := range map[string]bool{"Mcp-Param-Region": true, "x_y": true, "": false, "a b": false, "a:b": false, "é": false} {
		if got := IsToken(s); got != want {
			t.Errorf("IsToken(%q) = %v", s, got)
		}
	}
}

func TestMaxAge(t *testing.T) {
	if got := MaxAge(0, 10*time.Minute); got != "600" {
		t.Errorf("default: %q", got)
	}
	if got := MaxAge(90*time.Second, time.Minute); got != "90" {
		t.Errorf("set: %q", got)
	}
	if got := MaxAge(-1, time.Minute); got != "" {
		t.Errorf("negative: %q", got)
	}
}
