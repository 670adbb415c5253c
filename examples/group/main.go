// Command group shows package client/group: one client for several
// servers at once. Two servers, one speaking the legacy era and one the
// 2026-07-28 era, both have a tool named "search"; the group lists them
// as notes_search and docs_search, routes each call to its server, keeps
// a third server that cannot be reached apart, and reports a list change
// with the name of the server it came from.
//
//	go run ./examples/group
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/group"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

type searchIn struct {
	Query string `json:"query"`
}

type searchOut struct {
	Hits []string `json:"hits"`
}

// newServer is a server with one tool, "search", over its own documents.
func newServer(name string, docs ...string) *server.Server {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: name, Version: "1.0.0"}})
	err := server.AddTool(s, &mcp.Tool{Name: "search", Description: "Searches the " + name + "."},
		func(ctx context.Context, req *server.CallToolRequest, in searchIn) (searchOut, error) {
			out := searchOut{Hits: []string{}}
			for _, d := range docs {
				if in.Query != "" && strings.Contains(d, in.Query) {
					out.Hits = append(out.Hits, d)
				}
			}
			return out, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	return s
}

// inMemory returns a Connect function serving s over a new in-memory
// connection each time; wg waits for the sessions.
func inMemory(ctx context.Context, wg *sync.WaitGroup, s *server.Server) func(context.Context) (transport.Conn, error) {
	return func(context.Context) (transport.Conn, error) {
		c, srv := memory.NewPair()
		wg.Go(func() { _ = s.Serve(ctx, srv) }) // ends when the group closes the connection
		return c, nil
	}
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sessions sync.WaitGroup
	defer sessions.Wait()

	notes := newServer("notes", "buy milk", "call Ada about the search")
	docs := newServer("docs", "search syntax", "install guide")
	changes := make(chan group.Change, 1)
	g, err := group.Connect(ctx, []group.Server{
		{Name: "notes", Connect: inMemory(ctx, &sessions, notes), Client: &client.Options{ProtocolVersion: mcp.LatestLegacy}},
		{Name: "docs", Connect: inMemory(ctx, &sessions, docs)}, // the client detects the 2026-07-28 era
		{Name: "wiki", Connect: func(context.Context) (transport.Conn, error) {
			return nil, errors.New("connection refused")
		}},
	}, &group.Options{OnListChanged: func(_ context.Context, ch group.Change) { changes <- ch }})
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = g.Close() }()

	for _, st := range g.Servers() {
		fmt.Printf("%s: %s %s %v\n", st.Name, st.State, st.ProtocolVersion, st.Err)
	}
	for tool, err := range g.Tools(ctx) {
		if se, ok := errors.AsType[*group.ServerError](err); ok {
			fmt.Printf("skipped %s (down: %v)\n", se.Server, errors.Is(err, group.ErrServerDown))
			continue
		}
		fmt.Printf("tool %s (%s's %q): %s\n", tool.Name, tool.Server, tool.Original, tool.Description)
	}
	for _, name := range []string{"notes_search", "docs_search"} {
		out, _, err := group.CallTool[searchOut](ctx, g, name, searchIn{Query: "search"})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %q\n", name, out.Hits)
	}
	if _, err := g.CallTool(ctx, &mcp.CallToolParams{Name: "wiki_search"}); err != nil {
		fmt.Println("wiki_search:", errors.Is(err, group.ErrServerDown))
	}

	// The notes server adds a tool; the group hears which server changed.
	err = server.AddTool(notes, &mcp.Tool{Name: "add", Description: "Adds a note."},
		func(ctx context.Context, req *server.CallToolRequest, in searchIn) (searchOut, error) {
			return searchOut{}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	ch := <-changes
	fmt.Printf("%s changed its %s\n", ch.Server, ch.Kind)
}
