// Command testing is a small stdio server whose test, main_test.go,
// shows how to test an MCP server with package mcptest: in both eras, in
// memory, with the client's answers to its questions scripted and every
// message checked against the official schema.
//
//	go test ./examples/testing
package main

import (
	"context"
	"errors"
	"log"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

type orderIn struct {
	Item string `json:"item"`
}

type orderOut struct {
	Confirmation string `json:"confirmation"`
}

// address is the form the order tool asks for.
type address struct {
	Street string `json:"street"`
	City   string `json:"city"`
}

func newServer() (*server.Server, error) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "shop", Version: "1.0.0"}})
	err := server.AddTool(s, &mcp.Tool{Name: "order", Description: "Orders an item, asking where to send it."},
		func(ctx context.Context, req *server.CallToolRequest, in orderIn) (orderOut, error) {
			if in.Item == "" {
				return orderOut{}, errors.New("nothing to order")
			}
			addr, err := server.Ask[address](req.Request, "address", "Where should we send the "+in.Item+"?")
			if err != nil {
				return orderOut{}, err // the question itself, or the user's refusal
			}
			return orderOut{Confirmation: in.Item + " to " + addr.Street + ", " + addr.City}, nil
		})
	return s, err
}

func main() {
	s, err := newServer()
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Serve(context.Background(), stdio.New(nil)); err != nil {
		log.Fatal(err)
	}
}
