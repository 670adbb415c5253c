package redisstore

import (
	"path/filepath"
	"testing"

	"github.com/mcpkit/mcpkit/internal/apirecord"
)

// TestAPIRecord fails when the exported API of this module differs from
// api/*.txt; the message shows the difference and the command to run.
func TestAPIRecord(t *testing.T) {
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := apirecord.Check(dir, "store/redis")
	if err != nil {
		t.Fatal(err)
	}
	if msg != "" {
		t.Fatal(msg)
	}
}
