package command_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/transport/command"
)

// Launching a stdio server as a child process and connecting to it.
// Closing the client ends the child in the spec's order: its standard
// input is closed, then it is terminated, then killed, if it lingers.
func ExampleStart() {
	ctx := context.Background()
	cmd := exec.Command("npx", "-y", "@modelcontextprotocol/server-everything")
	cmd.Stderr = os.Stderr // the server's log
	conn, err := command.Start(ctx, cmd, nil)
	if err != nil {
		log.Fatal(err)
	}
	c, err := client.Connect(ctx, conn, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.ServerInfo().Name)
}
