package skills_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"testing/fstest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/skills"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// A host lists a server's skills, which reads no file, then loads one:
// its SKILL.md comes back only once its size, digest and frontmatter
// match the entry.
func ExampleClient() {
	ctx := context.Background()
	s := server.New(nil)
	x, err := skills.NewServer(s, nil)
	if err != nil {
		log.Fatal(err)
	}
	err = x.AddFS(fstest.MapFS{
		"haiku/SKILL.md": {Data: []byte("---\nname: haiku\ndescription: Write a haiku\n---\nFive, seven, five.\n")},
	}, "poems")
	if err != nil {
		log.Fatal(err)
	}
	clientEnd, serverEnd := memory.NewPair()
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, serverEnd) }()
	defer func() { cancel(); <-served }()
	c, err := client.Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	sc := skills.NewClient(c, nil)
	for sk, err := range sc.Skills(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(sk.URI, "-", sk.Frontmatter.Description())
		md, err := sc.Read(ctx, &sk, "")
		var ve *skills.VerifyError
		if errors.As(err, &ve) {
			log.Fatalf("refused %s: %s check", ve.URI, ve.Check)
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %d bytes, verified %v\n", md.Path, len(md.Data), md.Verified)
	}
	// Output:
	// skill://poems/haiku/SKILL.md - Write a haiku
	// SKILL.md: 66 bytes, verified true
}
