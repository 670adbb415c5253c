package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// revision is one protocol revision a server was found to serve, and how
// that was found.
type revision struct {
	Version string `json:"version"`
	Era     string `json:"era"`
	Via     string `json:"via"`
}

// revisions finds every revision the server serves, in both eras, as far
// as a client can tell cheaply: the modern ones are the supportedVersions
// of server/discover; a legacy server names one revision only, the one
// initialize negotiates (this client offers the newest, 2025-11-25, so
// older ones it may also accept are not seen). The era the connection cl
// did not use is probed — over HTTP on a second connection, over stdio on
// the same process (sideConn: the command runs once) — except when
// automatic detection already found that a server/discover probe fails.
// notes say, for an era that is not served, what showed it.
func (c *cli) revisions(ctx context.Context, cl *client.Client) (revs []revision, supported []string, notes []string, err error) {
	modern := func(cl *client.Client, second bool) error {
		// With --era modern nothing was asked yet; with auto, ask again
		// for the versions.
		d, err := cl.Discover(ctx)
		if err != nil {
			return err
		}
		supported = d.SupportedVersions
		via := "server/discover"
		if second {
			via += " on a second connection"
		}
		for _, v := range d.SupportedVersions {
			era := "modern"
			if mcp.IsLegacy(v) {
				era = "legacy"
			}
			revs = append(revs, revision{v, era, via})
		}
		return nil
	}
	probe := func(era string) (*client.Client, error) {
		if c.reconnect == nil {
			return nil, errors.New("no second connection")
		}
		return c.reconnect(ctx, era)
	}
	if cl.Era() == client.EraModern {
		if err := modern(cl, false); err != nil {
			return nil, nil, nil, fmt.Errorf("server/discover: %w", err)
		}
		if slices.ContainsFunc(revs, func(r revision) bool { return r.Era == "legacy" }) {
			return revs, supported, nil, nil
		}
		if c.side != nil {
			v, err := c.side.legacyRevision(ctx)
			if err != nil {
				return revs, supported, []string{"no legacy revision: initialize on the same process failed: " + firstLine(err)}, nil
			}
			revs = append(revs, revision{v, "legacy", "initialize on the same process"})
			return revs, supported, nil, nil
		}
		legacy, err := probe("legacy")
		if err != nil {
			return revs, supported, []string{"no legacy revision: initialize on a second connection failed: " + firstLine(err)}, nil
		}
		defer legacy.Close()
		revs = append(revs, revision{legacy.ProtocolVersion(), "legacy", "initialize on a second connection"})
		return revs, supported, nil, nil
	}
	revs = append(revs, revision{cl.ProtocolVersion(), "legacy", "initialize"})
	if c.f.era != "legacy" {
		// Automatic detection chose legacy: its server/discover probe
		// got no modern answer.
		return revs, nil, []string{"no modern revision: the server/discover probe got no modern answer"}, nil
	}
	if c.side != nil {
		d, err := c.side.discover(ctx)
		if err != nil {
			return revs, nil, []string{"no modern revision: server/discover on the same process failed: " + firstLine(err)}, nil
		}
		supported = d.SupportedVersions
		for _, v := range d.SupportedVersions {
			if !mcp.IsLegacy(v) {
				revs = append(revs, revision{v, "modern", "server/discover on the same process"})
			}
		}
	} else {
		m, err := probe("modern")
		if err == nil {
			defer m.Close()
			err = modern(m, true)
		}
		if err != nil {
			return revs, nil, []string{"no modern revision: server/discover on a second connection failed: " + firstLine(err)}, nil
		}
	}
	// Modern first, as server/discover lists them.
	revs = append(revs[1:], revs[0])
	return revs, supported, nil, nil
}

// firstLine is the first line of err's message.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
