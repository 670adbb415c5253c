package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// ErrDynamic is returned by Materialize for a skill whose resources are
// "dynamic": its entry publishes no manifest to verify against, so the
// client does not write it out.
var ErrDynamic = errors.New("skills: a dynamic skill has no manifest to verify")

// Materialize reads every file of skill s, verifies each as Read does,
// and only when all of them pass writes them into the new directory dir,
// by their paths relative to the skill's root: SKILL.md at its top. It
// returns those paths, in the entry's order.
//
// Nothing is written outside dir, and nothing at all on failure: the
// files go into a temporary directory beside dir, through an os.Root
// (no path can leave it, whatever the server sent), which is renamed to
// dir once complete. dir must not exist (fs.ErrExist). Files are written
// 0644, never executable: a skill's scripts are content, not programs
// the host runs without its user's approval.
//
// The entry is the unit the client verifies: a file the server serves
// but the entry does not list is not written. A skill URI is scoped to
// its server (SEP-2640): hosts that keep skills of several servers
// should put the server's identity into dir.
func (sc *Client) Materialize(ctx context.Context, s *Skill, dir string) ([]string, error) {
	if err := sc.Validate(s); err != nil {
		return nil, err
	}
	if s.Resources.Dynamic {
		return nil, fmt.Errorf("%w: %s", ErrDynamic, s.URI)
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("skills: materialize %s: %w", dir, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("skills: materialize %s: %w", dir, err)
	}
	// Read and verify everything first: within MaxSkillBytes in all
	// (Validate checked the declared sizes, Read the actual ones).
	files := make([]*Content, 0, len(s.Resources.Files))
	for _, f := range s.Resources.Files {
		c, err := sc.Read(ctx, s, f.URI)
		if err != nil {
			return nil, err
		}
		files = append(files, c)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("skills: materialize %s: %w", dir, err)
	}
	paths, err := writeAll(tmp, files)
	if err == nil {
		err = os.Chmod(tmp, 0o755)
	}
	if err == nil {
		err = os.Rename(tmp, dir)
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("skills: materialize %s: %w", dir, err)
	}
	return paths, nil
}

// writeAll writes files under dir through an os.Root.
func writeAll(dir string, files []*Content) ([]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	paths := make([]string, 0, len(files))
	for _, f := range files {
		if d := path.Dir(f.Path); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
		}
		if err := root.WriteFile(f.Path, f.Data, 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, f.Path)
	}
	return paths, nil
}
