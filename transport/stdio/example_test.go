package stdio_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// NewConn frames newline-delimited JSON-RPC over any reader and writer;
// New does the same over the process's standard input and output, for a
// server an MCP host launches.
func ExampleNewConn() {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	conn := stdio.NewConn(in, os.Stdout, &stdio.Options{MaxMessageBytes: 1 << 20})
	defer conn.Close()
	ctx := context.Background()
	msg, err := conn.Read(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("read:", string(msg))
	if err := conn.Write(ctx, transport.Message{Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// read: {"jsonrpc":"2.0","id":1,"method":"ping"}
	// {"jsonrpc":"2.0","id":1,"result":{}}
}
