package wirecheck

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// SchemaDirEnv names the environment variable that overrides SchemaDir.
const SchemaDirEnv = "MCPKIT_SCHEMA_DIR"

// Revisions lists the MCP revisions whose schemas the shared folder holds,
// oldest first.
var Revisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// SchemaDir returns the directory holding <revision>/schema.json: the value
// of $MCPKIT_SCHEMA_DIR when set, otherwise ../shared/spec/schema relative
// to the repository root, which is found by walking up from the working
// directory to the first directory that has a go.mod and whose parent has
// shared/spec/schema.
func SchemaDir() (string, error) {
	if dir := os.Getenv(SchemaDirEnv); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("wirecheck: $%s=%s is not a directory", SchemaDirEnv, dir)
		}
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("wirecheck: %w", err)
	}
	for dir := wd; ; {
		if isFile(filepath.Join(dir, "go.mod")) {
			schemas := filepath.Join(filepath.Dir(dir), "shared", "spec", "schema")
			if fi, err := os.Stat(schemas); err == nil && fi.IsDir() {
				return schemas, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", errors.New("wirecheck: no ../shared/spec/schema beside a go.mod above " + wd + " (set $" + SchemaDirEnv + ")")
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
