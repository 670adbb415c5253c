package memory_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// An in-process pair: what one end writes, the other reads. Serve a
// server on one end and connect a client to the other to test them
// without processes or sockets (package mcptest does this for tests).
func ExampleNewPair() {
	a, b := memory.NewPair()
	defer a.Close()
	defer b.Close()
	ctx := context.Background()
	go func() {
		if err := a.Write(ctx, transport.Message{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)}); err != nil {
			log.Print(err)
		}
	}()
	msg, err := b.Read(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(msg))
	// Output: {"jsonrpc":"2.0","method":"notifications/initialized"}
}
