package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// sessionFile is what --session-file holds: the legacy session of one
// server URL, continued by the next command against the same URL
// (client.Options.Resume).
type sessionFile struct {
	URL     string              `json:"url"`
	Session client.SessionState `json:"session"`
}

// loadSession reads --session-file, if set and present, into
// opts.Resume. A file that cannot be read as a session, or that names
// another URL, is reported on stderr and left aside: the command opens a
// new session and the file is rewritten after connecting.
func (f *clientFlags) loadSession(t target, opts *client.Options, stderr io.Writer) error {
	if f.sessionFile == "" {
		return nil
	}
	if t.url == "" {
		return usageErr("--session-file applies to HTTP targets only")
	}
	data, err := os.ReadFile(f.sessionFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--session-file: %w", err)
	}
	var sf sessionFile
	err = json.Unmarshal(data, &sf)
	if err == nil && (!mcp.ValidSessionID(sf.Session.SessionID) ||
		!slices.Contains(mcp.LegacyVersions(), sf.Session.ProtocolVersion)) {
		err = errors.New("no legacy session in it")
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpkit: ignoring %s, not a session file (%v); opening a new session\n", f.sessionFile, err)
		return nil
	}
	if sf.URL != t.url {
		fmt.Fprintf(stderr, "mcpkit: ignoring %s, a session of %s; opening a new session\n", f.sessionFile, sf.URL)
		return nil
	}
	opts.Resume = &sf.Session
	return nil
}

// saveSession writes the connection's session to --session-file (mode
// 0600: the session id lets its holder act in the session), or removes
// the file when there is no session to keep (a modern connection, a
// server without session ids).
func (f *clientFlags) saveSession(t target, c *client.Client) error {
	if f.sessionFile == "" {
		return nil
	}
	st, ok := c.SessionState()
	if !ok {
		if err := os.Remove(f.sessionFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--session-file: %w", err)
		}
		return nil
	}
	data, err := json.Marshal(sessionFile{URL: t.url, Session: st})
	if err != nil {
		return fmt.Errorf("--session-file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.sessionFile), ".mcpkit-session-*")
	if err != nil {
		return fmt.Errorf("--session-file: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("--session-file: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.sessionFile); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("--session-file: %w", err)
	}
	return nil
}
