package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/command"
	"github.com/mcpkit/mcpkit/transport/streamable"
	"golang.org/x/term"
)

// clientFlags are the flags every client command takes.
type clientFlags struct {
	era            string
	headers        multiFlag
	json           bool
	answers        multiFlag
	acceptDefaults bool
	decline        bool
	samplingReply  string
	samplingSet    bool
	roots          multiFlag
	logLevel       string
	noAuth         bool
	dpop           bool
	open           bool
	clientID       string
	clientSecret   string
	timeout        time.Duration
	out            string
	sessionFile    string // session_file.go
}

func (f *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.era, "era", "auto", "protocol era: auto, legacy or modern")
	fs.Var(&f.headers, "header", "HTTP header `K: V` (repeatable)")
	fs.BoolVar(&f.json, "json", false, "print the raw result JSON")
	fs.Var(&f.answers, "answer", "elicitation answer `key=value` (repeatable)")
	fs.BoolVar(&f.acceptDefaults, "accept-defaults", false, "accept elicitations with the schema's defaults")
	fs.BoolVar(&f.decline, "decline", false, "decline every elicitation")
	fs.Func("sampling-reply", "answer sampling requests with `TEXT`", func(s string) error {
		f.samplingReply, f.samplingSet = s, true
		return nil
	})
	fs.Var(&f.roots, "root", "a root `URI` offered to the server (repeatable)")
	fs.StringVar(&f.logLevel, "log-level", "info", "the server's log messages to show, from `LEVEL` up (off: none)")
	fs.BoolVar(&f.noAuth, "no-auth", false, "do not run the OAuth flow when the server answers 401")
	fs.BoolVar(&f.dpop, "dpop", false, "ask for DPoP-bound OAuth tokens, with the key in the configuration directory")
	fs.BoolVar(&f.open, "open", false, "open the OAuth authorization URL in a browser (else it is only printed)")
	fs.StringVar(&f.clientID, "client-id", "", "pre-registered OAuth client `ID`")
	fs.StringVar(&f.clientSecret, "client-secret", "", "the pre-registered client's `SECRET` (or $MCPKIT_CLIENT_SECRET)")
	fs.DurationVar(&f.timeout, "timeout", 0, "give up after `DURATION` (exit code 3); 0: no limit")
	fs.StringVar(&f.out, "out", "", "save binary (blob) contents to `FILE`")
	fs.StringVar(&f.sessionFile, "session-file", "", "keep the legacy HTTP session in `FILE` between invocations")
}

func (f *clientFlags) protocolVersion() (string, error) {
	switch f.era {
	case "auto", "":
		return "", nil
	case "legacy":
		return mcp.LatestLegacy, nil
	case "modern":
		return mcp.Version20260728, nil
	}
	return "", usageErr("--era must be auto, legacy or modern, not %q", f.era)
}

// target is where the client connects: a URL or a command line.
type target struct {
	url     string
	command []string
}

func (t target) String() string {
	if t.url != "" {
		return t.url
	}
	return strings.Join(t.command, " ")
}

// parseTarget takes the target off the positional arguments: the first one
// when it is a URL, else the command after "--".
func parseTarget(pos, command []string) (target, []string, error) {
	if command != nil {
		return target{command: command}, pos, nil
	}
	if len(pos) == 0 {
		return target{}, nil, usageErr("missing TARGET: an http(s):// URL or -- command args...")
	}
	u := pos[0]
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return target{}, nil, usageErr("TARGET %q is not an http:// or https:// URL (for a command, end with -- command args...)", u)
	}
	return target{url: u}, pos[1:], nil
}

func (f *clientFlags) header() (http.Header, error) {
	h := http.Header{}
	for _, kv := range f.headers {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usageErr("--header %q is not K:V", kv)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return h, nil
}

// cliInfo is how the CLI names itself to servers.
var cliInfo = mcp.Implementation{Name: "mcpkit-cli", Version: "0.1.0"}

// connect opens the transport to t and connects a client with opts.
func connect(ctx context.Context, t target, f *clientFlags, opts client.Options, stderr io.Writer) (*client.Client, error) {
	c, _, err := connectSide(ctx, t, f, opts, stderr)
	return c, err
}

// connectSide is connect that also returns, for a stdio target, the
// side channel inspect asks the other era through (nil over HTTP, where
// a second connection costs nothing).
func connectSide(ctx context.Context, t target, f *clientFlags, opts client.Options, stderr io.Writer) (*client.Client, *sideConn, error) {
	version, err := f.protocolVersion()
	if err != nil {
		return nil, nil, err
	}
	h, err := f.header()
	if err != nil {
		return nil, nil, err
	}
	if t.url == "" && len(f.headers) > 0 {
		return nil, nil, usageErr("--header applies to HTTP targets only")
	}
	if t.url == "" && (f.clientID != "" || f.clientSecret != "" || f.open) {
		return nil, nil, usageErr("--client-id, --client-secret and --open apply to HTTP targets only")
	}
	var hc *http.Client
	if t.url != "" && !f.noAuth {
		if hc, err = oauthClient(f, stderr); err != nil {
			return nil, nil, err
		}
	}
	opts.Info = cliInfo
	opts.ProtocolVersion = version
	if err := f.loadSession(t, &opts, stderr); err != nil {
		return nil, nil, err
	}
	var side *sideConn
	dial := func() (transport.Conn, error) {
		if t.url != "" {
			return streamable.New(t.url, &streamable.Options{Header: h, HTTPClient: hc, KeepSession: f.sessionFile != ""}), nil
		}
		cmd := exec.Command(t.command[0], t.command[1:]...)
		cmd.Stderr = stderr
		conn, err := command.Start(ctx, cmd, nil)
		if err != nil {
			return nil, err
		}
		side = newSideConn(conn)
		return side, nil
	}
	conn, err := dial()
	if err != nil {
		return nil, nil, &exitError{code: exitConn, err: launchError(t, err)}
	}
	c, err := client.Connect(ctx, conn, &opts)
	if err != nil && version == "" && t.url == "" && errors.Is(err, client.ErrProbeClosed) {
		// A legacy stdio server that exits on the modern probe:
		// relaunch it and speak legacy.
		if conn, err = dial(); err != nil {
			return nil, nil, &exitError{code: exitConn, err: launchError(t, err)}
		}
		opts.ProtocolVersion = mcp.LatestLegacy
		c, err = client.Connect(ctx, conn, &opts)
	}
	if err != nil {
		conn.Close()
		if code := exitCode(err); code == exitProtocol {
			return nil, nil, fmt.Errorf("connecting to %s: %w", t, err)
		}
		return nil, nil, &exitError{code: exitConn, err: fmt.Errorf("connecting to %s: %w", t, err)}
	}
	if err := f.saveSession(t, c); err != nil {
		c.Close()
		return nil, nil, err
	}
	if f.logLevel != "off" && f.logLevel != "" && (c.Era() == client.EraModern || c.ServerCapabilities().Logging != nil) {
		if err := c.SetLoggingLevel(ctx, mcp.LoggingLevel(f.logLevel)); err != nil {
			c.Close()
			return nil, nil, fmt.Errorf("setting the log level: %w", err)
		}
	}
	return c, side, nil
}

// launchError says once that the target's command could not start, and
// why: os/exec's errors name the program themselves ("fork/exec ./x: …",
// `exec: "x": …`) and transport/command prefixes its own name, so only the
// cause is kept under the CLI's "starting <command>".
func launchError(t target, err error) error {
	var ee *exec.Error
	var pe *fs.PathError
	switch {
	case errors.As(err, &ee):
		err = ee.Err
	case errors.As(err, &pe):
		err = pe.Err
	}
	return fmt.Errorf("starting %s: %w", t, err)
}

// stdinIsTerminal reports whether stdin is a terminal.
func stdinIsTerminal() bool { return isTerminal(os.Stdin) }

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
