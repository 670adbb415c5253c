package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Exit codes.
const (
	exitOK       = 0
	exitToolErr  = 1   // the tool answered with isError
	exitProtocol = 2   // the server answered with a JSON-RPC error
	exitConn     = 3   // connecting or talking to the server failed
	exitInput    = 4   // the server asked for input the flags cannot give
	exitUsage    = 64  // the command line is wrong
	exitSignal   = 130 // interrupted (SIGINT or SIGTERM) before the answer came
)

const usageText = `mcpkit: serve a demo MCP server, put a gateway in front of any MCP servers,
or inspect and call any MCP server.

Usage:
  mcpkit serve [--http ADDR [--auth [--auth-tokens jwt|opaque] [--dpop off|optional|required]]
               [--allow-host NAME] [--allow-origin ORIGIN] [--cors-origin ORIGIN] | --stdio]
  mcpkit gateway [--http ADDR [--addr-file F]] [--stdio] [--prefix P] [--era auto|legacy|modern]
                 [--header 'K: V'] [--root URI] (--url URL | --config FILE | -- command args...)
  mcpkit inspect  [flags] TARGET
  mcpkit call     [flags] [--task] TARGET TOOL [JSON | key=value ...]
  mcpkit read     [flags] TARGET URI
  mcpkit prompt   [flags] TARGET NAME [key=value ...]
  mcpkit complete [flags] (--prompt NAME | --resource URI) TARGET ARG VALUE
  mcpkit listen   [flags] [--tools] [--prompts] [--resources] [--resource URI ...] TARGET
  mcpkit app      [flags] [--addr ADDR] [--bridge FILE] TARGET
  mcpkit skills   [flags] [--fetch DIR] TARGET [SKILL]

serve --auth requires OAuth on the HTTP endpoint, from a built-in demo
authorization server on the same origin that approves every request. Its
access tokens are signed JWTs (--auth-tokens jwt, the default) or opaque
tokens the endpoint checks by introspection (--auth-tokens opaque); a token
request carrying a DPoP proof gets a token bound to the proof's key, whose
proofs the endpoint then checks (--dpop optional, the default), or demands
(--dpop required), or ignores (--dpop off).
serve --http on a loopback address accepts loopback Host names and origins
only; beyond loopback it accepts any Host but no browser request (one with
an Origin), unless --allow-host and --allow-origin (repeatable) name them.
--cors-origin ORIGIN (repeatable; * for any) lets web pages of another origin
call the endpoint with fetch(): preflights are answered, the MCP headers
exposed, and the origin accepted as by --allow-origin.

serve --http also serves the deprecated HTTP+SSE transport (2024-11-05) at
the same URL, for clients that predate Streamable HTTP.

gateway serves one or more upstream MCP servers, of any era and transport,
to clients of both eras, on Streamable HTTP (--http, with a health endpoint
at /healthz) and/or stdio (the default without --http). One upstream comes
from the flags: a command after --, or --url; several, with auth in front,
rate limits and every limit, from a JSON file (--config; docs/guide/gateway.md).
  mcpkit gateway --http 127.0.0.1:8080 --prefix fs -- npx @modelcontextprotocol/server-filesystem /data

app previews MCP Apps: it serves on loopback (a random port, printed) a page
that lists the tools with a ui:// view and renders the chosen one in a
sandboxed iframe under the view's CSP and permissions, bridged to the server
by the MCP Apps SDK's host side, a bundle loaded from --bridge FILE (or
$MCPKIT_APP_BRIDGE; docs/design/apps-host.md says how to make it).

TARGET is an http:// or https:// URL of a Streamable HTTP endpoint (or of a
server of the deprecated HTTP+SSE transport, found by the spec's fallback), or
"-- command args..." (a server launched over stdio, and shut down in spec
order), which must come last:
  mcpkit call add a=2 b=40 -- mcpkit serve --stdio

inspect lists the revisions the server serves in both eras: the modern ones
from server/discover, the legacy one initialize negotiates. The era the
connection did not use is probed on a second connection (for a stdio target,
a second launch), unless automatic detection already saw server/discover fail.

call runs a tool that requires a task (inspect shows "task: required") as
a task, showing its states and progress on stderr and answering its input
requests as for any call; --task does the same for a tool that allows one
("task: optional").

skills lists the server's skills (SEP-2640); with SKILL (the URI of its
SKILL.md, or its name) it shows the skill's entry and its SKILL.md, verified
against the entry's size, digest and frontmatter; with --fetch DIR it writes
every file of the skill into the new directory DIR, all verified first:
nothing is written when one fails (exit code 2). Files are read only then.
  mcpkit skills --fetch ./pdf-processing http://127.0.0.1:8080/mcp pdf-processing

key=value arguments: a value that parses as JSON is sent as that JSON value
(a=2 is a number, ok=true a boolean), anything else as a string.

Flags of the client commands:
  --era auto|legacy|modern   protocol era (default auto: probe, then fall back)
  --header 'K: V'            HTTP header on every request (repeatable)
  --json                     print the raw result JSON
  --answer key=value         answer a form elicitation field (repeatable)
  --accept-defaults          accept form elicitations with the schema's defaults
  --decline                  decline every elicitation
  --sampling-reply TEXT      answer sampling requests with TEXT
  --root file:///path        a root offered to the server (repeatable)
  --log-level LEVEL          show the server's log messages from LEVEL up
                             (default info; off shows none)
  --timeout DURATION         give up after DURATION (such as 30s or 2m),
                             connecting and waiting included: exit code 3
  --out FILE                 save binary contents (a blob, image or audio;
                             the first one) to FILE instead of showing its
                             size, type and first bytes
  --session-file FILE        keep the legacy HTTP session in FILE (mode 0600)
                             and continue it on the next run against the
                             same URL; a new one when the server lost it
Without --answer, --accept-defaults or --decline, elicitations are asked on
the terminal when stdin is one (URL elicitations need an explicit yes), and
declined otherwise. Without --sampling-reply, sampling requests are shown on
the terminal for you to type the reply (or !decline), and fail otherwise.

OAuth (HTTP targets): when the server answers 401, mcpkit discovers its
authorization server, registers (dynamically, unless --client-id), prints
the authorization URL and waits for the browser's redirect on
http://127.0.0.1:8976/callback. Tokens and registrations are kept per
authorization server in $MCPKIT_CONFIG_DIR/oauth.json (default: mcpkit in
the user's configuration directory, ~/.config/mcpkit on Linux; mode 0600)
and reused by later runs.
  --open                     also open the authorization URL in a browser
  --client-id ID             a pre-registered client
  --client-secret SECRET     its secret (or $MCPKIT_CLIENT_SECRET)
  --no-auth                  never authorize: a 401 is a connection failure
  --dpop                     ask for DPoP-bound tokens (RFC 9449), proving
                             possession of a P-256 key kept in
                             $MCPKIT_CONFIG_DIR/dpop.pem (made on first use)

Exit codes:
  0   success
  1   the tool returned a result with isError: its content is printed to
      stderr after the line "mcpkit: the tool NAME reported an error
      (isError):" (with --json, the whole result goes to stdout as usual)
  2   protocol error: the server answered with a JSON-RPC error
  3   connection or transport failure (authorization and --timeout included)
  4   the server asked for input the flags cannot give: with --accept-defaults,
      a required field of its form has no default (the message names it;
      add --answer FIELD=VALUE)
  64  usage error
  130 interrupted before the answer came
`

// exitError carries an exit code to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns its exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	case "serve":
		err = runServe(ctx, rest, stderr)
	case "gateway":
		err = runGateway(ctx, rest, stderr)
	case "app":
		err = runApp(ctx, rest, stdout, stderr)
	case "inspect", "call", "read", "prompt", "complete", "listen", "skills":
		err = runClient(ctx, cmd, rest, stdout, stderr)
	default:
		err = usageErr("unknown command %q (run mcpkit help)", cmd)
	}
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	if ctx.Err() != nil && code == exitConn {
		code, err = exitSignal, errors.New("interrupted")
	}
	if !errors.Is(err, errToolError) && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stderr, "mcpkit: %v\n", err)
	}
	if code == exitUsage && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, "run 'mcpkit help' for usage")
	}
	return code
}

// errToolError reports an isError tool result (already printed).
var errToolError = errors.New("the tool reported an error")

func exitCode(err error) int {
	var ee *exitError
	var ire *client.InputRequiredError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errToolError):
		return exitToolErr
	case errors.As(err, &ire):
		return exitProtocol
	}
	if _, ok := jsonrpc.AsError(err); ok {
		return exitProtocol
	}
	return exitConn
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// parseInterspersed parses fs over args, allowing flags between positional
// arguments. Everything after a "--" is returned apart as the command.
func parseInterspersed(fs *flag.FlagSet, args []string) (pos, command []string, err error) {
	for i, a := range args {
		if a == "--" {
			command = args[i+1:]
			if len(command) == 0 {
				return nil, nil, usageErr("nothing after --: give the server command to run")
			}
			args = args[:i]
			break
		}
	}
	out := fs.Output()
	fs.SetOutput(io.Discard) // errors are reported once, by run
	defer fs.SetOutput(out)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(out)
				fs.Usage()
				return nil, nil, err
			}
			return nil, nil, &exitError{code: exitUsage, err: err}
		}
		if fs.NArg() == 0 {
			return pos, command, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
