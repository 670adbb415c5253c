package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// TestEnvCache: the same bytes decode once and share the value; values
// that fail to decode, and values longer than envCacheKey, are not kept;
// the cache never holds more than envCacheEntries.
func TestEnvCache(t *testing.T) {
	var c envCache[mcp.Implementation]
	a, err := c.decode(jsontext.Value(`{"name":"a","version":"1"}`))
	if err != nil || a.Name != "a" {
		t.Fatalf("decode = %+v, %v", a, err)
	}
	b, _ := c.decode(jsontext.Value(`{"name":"a","version":"1"}`))
	if a != b {
		t.Fatal("the same bytes decoded twice")
	}
	if _, err := c.decode(jsontext.Value(`{"name":1}`)); err == nil {
		t.Fatal("a number for a string decoded")
	}
	long := jsontext.Value(`{"name":"` + strings.Repeat("x", envCacheKey) + `","version":"1"}`)
	if v, err := c.decode(long); err != nil || len(v.Name) != envCacheKey {
		t.Fatalf("long value: %v", err)
	}
	if n := len(c.m); n != 1 {
		t.Fatalf("%d entries, want only the first value", n)
	}
	for i := range 3 * envCacheEntries {
		if _, err := c.decode(jsontext.Value(fmt.Sprintf(`{"name":"c%d","version":"1"}`, i))); err != nil {
			t.Fatal(err)
		}
		if n := len(c.m); n > envCacheEntries {
			t.Fatalf("%d entries, bound %d", n, envCacheEntries)
		}
	}
}
