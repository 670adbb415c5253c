package streamable_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Connecting to a remote MCP server over Streamable HTTP. The transport
// answers JSON and SSE responses, resumes broken streams, re-initializes
// a lost legacy session, and falls back to the 2024-11-05 HTTP+SSE
// transport for servers that only speak it. Give it an http.Client with
// the timeouts and the auth (auth/oauth's Transport) your deployment
// needs; a client-wide timeout must leave room for streamed answers.
func ExampleNew() {
	conn := streamable.New("https://mcp.example.com/mcp", &streamable.Options{
		HTTPClient: &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 30 * time.Second}},
	})
	ctx := context.Background()
	c, err := client.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tool.Name)
	}
}
