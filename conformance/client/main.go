// Command client is mcpkit's fixture client for the official MCP
// conformance suite. The suite runs it once per scenario with the mock
// server's URL as the last argument and the scenario in
// MCP_CONFORMANCE_SCENARIO; each scenario is written with the public
// mcpkit client API.
//
//	MCP_CONFORMANCE_SCENARIO=tools_call go run ./conformance/client http://localhost:3000/mcp
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// scenario runs one conformance scenario against the server at url.
type scenario func(ctx context.Context, env *env) error

// env is what a scenario gets: where to connect and how.
type env struct {
	url      string
	scenario string // MCP_CONFORMANCE_SCENARIO
	version  string // MCP_CONFORMANCE_PROTOCOL_VERSION
	context  string // MCP_CONFORMANCE_CONTEXT (JSON), when given
	log      *slog.Logger

	transport *streamable.Conn // of the last connect
	// httpClient, when set, sends the transport's requests (the auth
	// scenarios put an OAuth round tripper there).
	httpClient *http.Client
}

var scenarios = map[string]scenario{
	"initialize":                          runInitialize,
	"tools_call":                          runToolsCall,
	"elicitation-sep1034-client-defaults": runElicitationDefaults,
	"sse-retry":                           runSSERetry,
	"json-schema-2020-12-preservation":    runSchemaPreservation,
	"request-metadata":                    runRequestMetadata,
	"http-standard-headers":               runStandardHeaders,
	"http-custom-headers":                 runCustomHeaders,
	"http-invalid-tool-headers":           runInvalidToolHeaders,
	"json-schema-ref-no-deref":            runRefNoDeref,
	"sep-2322-client-request-state":       runMRTRRequestState,
	"sep-2640-client-no-prefetch":         runSkills,
	"sep-2640-client-verify-digest":       runSkills,
	"sep-2640-client-verify-size":         runSkills,
	"sep-2640-client-verify-frontmatter":  runSkills,
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: client <server-url> (scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	run, ok := scenarios[name]
	if !ok {
		known := make([]string, 0, len(scenarios))
		for k := range scenarios {
			known = append(known, k)
		}
		sort.Strings(known)
		fmt.Fprintf(os.Stderr, "client: scenario %q is not implemented (have: %v)\n", name, known)
		os.Exit(3)
	}
	e := &env{
		url:      os.Args[len(os.Args)-1],
		scenario: name,
		version:  os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"),
		context:  os.Getenv("MCP_CONFORMANCE_CONTEXT"),
		log:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, e); err != nil {
		fmt.Fprintf(os.Stderr, "client: %s: %v\n", name, err)
		os.Exit(1)
	}
}

// connect connects with the options a scenario needs, in the revision
// MCP_CONFORMANCE_PROTOCOL_VERSION names: a modern one (2026-07-28) pins
// the modern era (per-request envelope and headers, no initialize), a
// legacy one the initialize handshake offering it; none leaves the client
// to detect the era.
func (e *env) connect(ctx context.Context, opts client.Options) (*client.Client, error) {
	opts.Info = mcp.Implementation{Name: "mcpkit-conformance-client", Version: "0.1.0"}
	opts.Logger = e.log
	opts.ProtocolVersion = e.version
	e.transport = streamable.New(e.url, &streamable.Options{Logger: e.log, HTTPClient: e.httpClient})
	return client.Connect(ctx, e.transport, &opts)
}

// awaitListening waits (briefly) until the GET listening stream is up.
// Scenarios whose server sends its requests on the standalone stream
// rather than on the stream of the call that needs them need it there
// before they make that call.
func (e *env) awaitListening(ctx context.Context) {
	select {
	case <-e.transport.Listening():
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
	}
}
