// Command skills shows Agent Skills over MCP (the
// io.modelcontextprotocol/skills extension, SEP-2640, package
// ext/skills): a server publishes a directory of skills embedded in the
// binary; a host lists them (reading no file), loads one (its SKILL.md,
// verified against the entry's size, digest and frontmatter), reads one
// of its references on demand, and writes the whole skill into a
// directory, every file verified before anything is written. It runs
// the same host in both protocol eras.
//
//	go run ./examples/skills
package main

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

//go:embed skills
var embedded embed.FS

func newServer() (*server.Server, error) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "team-skills", Version: "1.0.0"}})
	x, err := skills.NewServer(s, nil) // declares the extension, serves its methods
	if err != nil {
		return nil, err
	}
	dir, err := fs.Sub(embedded, "skills")
	if err != nil {
		return nil, err
	}
	// Every directory of dir is a skill: skill://<dir>/SKILL.md and its files.
	return s, x.AddFS(dir, "")
}

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	s, err := newServer()
	if err != nil {
		return err
	}
	for _, version := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		if err := host(ctx, s, version); err != nil {
			return err
		}
	}
	return nil
}

// host connects in the given revision and uses the server's skills.
func host(ctx context.Context, s *server.Server, version string) error {
	clientEnd, serverEnd := memory.NewPair()
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, serverEnd) }()
	defer func() { cancel(); <-served }()

	c, err := client.Connect(ctx, clientEnd, &client.Options{ProtocolVersion: version})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Println(version)

	sc := skills.NewClient(c, nil)
	if !sc.Supported(ctx) {
		return fmt.Errorf("the server does not declare %s", skills.ExtensionID)
	}
	// Listing reads no file: the entry carries the frontmatter and the
	// manifest (each file's URI, size and digest).
	var picked *skills.Skill
	for s, err := range sc.Skills(ctx) {
		if err != nil {
			return err // a *skills.VerifyError names the entry and the rule
		}
		fmt.Printf("  %s: %s (%d files)\n", s.Frontmatter.Name(), s.Frontmatter.Description(), len(s.Resources.Files))
		picked = &s
	}
	// Loading the skill reads its SKILL.md, verified before it is returned.
	md, err := sc.Read(ctx, picked, "")
	if err != nil {
		return err
	}
	fmt.Printf("  loaded %s: %d bytes, verified %v\n", md.URI, len(md.Data), md.Verified)
	// A reference is read when the skill's instructions need it.
	ref, err := sc.Read(ctx, picked, "references/commits.md")
	if err != nil {
		return err
	}
	fmt.Printf("  read %s: %d bytes\n", ref.Path, len(ref.Data))

	// Materialize writes every file, all verified first, into a new
	// directory (a failure writes nothing).
	tmp, err := os.MkdirTemp("", "skills-example")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // a leftover temp directory is harmless
	paths, err := sc.Materialize(ctx, picked, filepath.Join(tmp, "git-flow"))
	if err != nil {
		return err
	}
	fmt.Printf("  wrote %v\n", paths)
	return nil
}
