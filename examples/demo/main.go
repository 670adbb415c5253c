// Command demo shows an mcpkit server and client talking over stdio: it
// launches itself as the server process, connects a client to it, and
// walks through tools, elicitation, progress and resources.
//
//	go run ./examples/demo
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/command"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

const serverFlag = "-serve"

func main() {
	if len(os.Args) > 1 && os.Args[1] == serverFlag {
		s, err := newServer()
		if err != nil {
			log.Fatal(err)
		}
		if err := s.Serve(context.Background(), stdio.New(nil)); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := runClient(); err != nil {
		log.Fatal(err)
	}
}

type addIn struct {
	A float64 `json:"a" jsonschema:"description=first addend"`
	B float64 `json:"b" jsonschema:"description=second addend"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

// user is the form of the signup tool, inferred by server.Ask.
type user struct {
	Name string `json:"name"`
	Plan string `json:"plan,omitzero" jsonschema:"enum=free|pro,default=free"`
}

type signupOut struct {
	Welcome string `json:"welcome"`
}

func newServer() (*server.Server, error) {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "demo-server", Version: "1.0.0"}})
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	add(server.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(ctx context.Context, req *server.CallToolRequest, in addIn) (addOut, error) {
			return addOut{Sum: in.A + in.B}, nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "count", Description: "Counts to three, reporting progress."},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (string, error) {
			for i := 1; i <= 3; i++ {
				if err := req.Progress(ctx, float64(i), 3, fmt.Sprintf("counted %d", i)); err != nil {
					return "", err
				}
				time.Sleep(50 * time.Millisecond)
			}
			return "counted to three", nil
		}))
	add(server.AddTool(s, &mcp.Tool{Name: "signup", Description: "Asks the user for a name, then welcomes them."},
		func(ctx context.Context, req *server.CallToolRequest, in struct{}) (signupOut, error) {
			// Written once for both eras: a modern client answers the
			// input-required result and calls again; for a legacy client
			// the server asks it directly and runs the handler again.
			// A declined form is a tool error.
			u, err := server.Ask[user](req.Request, "user", "What should we call you?")
			if err != nil {
				return signupOut{}, err
			}
			return signupOut{Welcome: fmt.Sprintf("Welcome, %s (%s plan)!", u.Name, u.Plan)}, nil
		}))
	add(s.AddResource(&mcp.Resource{URI: "demo://readme", Name: "readme", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{
				&mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "mcpkit speaks MCP."},
			}}, nil
		}))
	return s, errors.Join(errs...)
}

func runClient() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, serverFlag)
	cmd.Stderr = os.Stderr
	conn, err := command.Start(ctx, cmd, nil)
	if err != nil {
		return err
	}
	c, err := client.Connect(ctx, conn, &client.Options{
		Info: mcp.Implementation{Name: "demo-client", Version: "1.0.0"},
		// The signup tool asks for a name. The same handler answers in
		// both eras: here (modern, the default) the server's
		// input-required result, which the client answers before it
		// calls again; on a legacy connection the server's
		// elicitation/create request.
		ElicitationDefaults: true,
		ElicitHandler: func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			fmt.Printf("  server asks: %q -> answering name=Ada (plan left to its default)\n", p.Message)
			return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("connected to %s %s, protocol %s\n", c.ServerInfo().Name, c.ServerInfo().Version, c.ProtocolVersion())

	fmt.Println("tools:")
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			return err
		}
		fmt.Printf("  %-7s %s\n", tool.Name, tool.Description)
	}
	sum, _, err := client.CallTool[addOut](ctx, c, "add", addIn{A: 2, B: 40})
	if err != nil {
		return err
	}
	fmt.Printf("add(2, 40) -> %v\n", sum.Sum)

	pctx := client.WithProgress(ctx, func(p *mcp.ProgressParams) {
		fmt.Printf("  progress %v/%v: %s\n", p.Progress, *p.Total, p.Message)
	})
	counted, _, err := client.CallTool[string](pctx, c, "count", nil)
	if err != nil {
		return err
	}
	fmt.Printf("count -> %s\n", counted)

	welcome, _, err := client.CallTool[signupOut](ctx, c, "signup", nil)
	if err != nil {
		return err
	}
	fmt.Printf("signup -> %s\n", welcome.Welcome)

	rr, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://readme"})
	if err != nil {
		return err
	}
	fmt.Printf("demo://readme -> %q\n", rr.Contents[0].(*mcp.TextResourceContents).Text)
	return nil
}
