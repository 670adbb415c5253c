package wirecheck

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
)

// SchemaDirEnv names the environment variable that holds the directory of
// the official schemas, <dir>/<revision>/schema.json. It is the only way
// the tests find them: the schemas are not part of the repository.
const SchemaDirEnv = "MCPKIT_SCHEMA_DIR"

// RequireEnv names the environment variable that, set to 1, makes missing
// schemas a test failure instead of a skip. CI sets it.
const RequireEnv = "MCPKIT_REQUIRE_SCHEMAS"

// Revisions lists the MCP revisions whose schemas the schema directory
// holds, oldest first.
var Revisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// ErrNoSchemas is SchemaDir's error when $MCPKIT_SCHEMA_DIR is not set.
var ErrNoSchemas = errors.New("official MCP schemas not found; set " + SchemaDirEnv +
	" to the directory holding <revision>/schema.json (" + RequireEnv + "=1 makes this a failure)")

// SchemaDir returns the directory holding <revision>/schema.json, the
// value of $MCPKIT_SCHEMA_DIR: ErrNoSchemas when it is not set, another
// error when it does not name a directory (a misconfiguration, which is
// never skipped).
func SchemaDir() (string, error) {
	dir := os.Getenv(SchemaDirEnv)
	if dir == "" {
		return "", ErrNoSchemas
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("wirecheck: $%s=%s is not a directory", SchemaDirEnv, dir)
	}
	return dir, nil
}

// required reports whether $MCPKIT_REQUIRE_SCHEMAS asks for the schemas.
func required() bool { return os.Getenv(RequireEnv) == "1" }

// Dir returns the schema directory for a test whose subject is the
// schemas themselves. Without them the test is skipped with one line
// naming $MCPKIT_SCHEMA_DIR, or fails when $MCPKIT_REQUIRE_SCHEMAS=1; a
// $MCPKIT_SCHEMA_DIR that is not a directory always fails.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := SchemaDir()
	if err != nil {
		absent(t, err, t.Skip)
	}
	return dir
}

// absent handles a failed lookup: skip (or log) when the schemas are
// simply not configured and not required, fail otherwise.
func absent(t testing.TB, err error, skip func(...any)) {
	t.Helper()
	if errors.Is(err, ErrNoSchemas) && !required() {
		skip(err.Error())
		return
	}
	t.Fatal(err)
}

// logged remembers the tests that have already said their schema checks
// are off, so each says it once.
var logged sync.Map // test name → struct{}

func logOnce(t testing.TB) func(...any) {
	return func(args ...any) {
		t.Helper()
		if _, dup := logged.LoadOrStore(t.Name(), struct{}{}); dup {
			return
		}
		t.Cleanup(func() { logged.Delete(t.Name()) })
		t.Log(args...)
	}
}
