package main

// "mcpkit app": a local preview host for MCP Apps authors. It connects to
// any server the other client commands reach (a URL or -- command args),
// serves on loopback a page that lists the tools with a ui:// view and
// renders the chosen one in a sandboxed iframe, bridged to the server by
// the official MCP Apps SDK's host side (AppBridge), whose bundle the
// page loads from --bridge. docs/design/apps-host.md says why it is built
// this way.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/apps"
)

// appBridgeEnv names the SDK bundle when --bridge is not given.
const appBridgeEnv = "MCPKIT_APP_BRIDGE"

// appBridgeHelp says how to make the bundle --bridge loads.
const appBridgeHelp = `mcpkit app needs the MCP Apps SDK's host side (npm @modelcontextprotocol/ext-apps,
module app-bridge) bundled as one ES module; make it once with
  npm install @modelcontextprotocol/ext-apps@2.0.4 @modelcontextprotocol/client @modelcontextprotocol/core zod esbuild
  npx esbuild node_modules/@modelcontextprotocol/ext-apps/dist/src/app-bridge.js --bundle --format=esm --outfile=app-bridge.js
and pass --bridge app-bridge.js (or set ` + appBridgeEnv + `); interop/peers/install.sh makes one too`

func runApp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcpkit app", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: mcpkit app [--addr ADDR] [--bridge FILE] [flags] TARGET. Flags:")
		fs.PrintDefaults()
	}
	var f clientFlags
	f.register(fs)
	addr := fs.String("addr", "127.0.0.1:0", "serve the preview page on loopback `ADDR` (the views' sandbox gets a second port)")
	bridgePath := fs.String("bridge", os.Getenv(appBridgeEnv), "the MCP Apps SDK's host bundle, an ES module `FILE` (default $"+appBridgeEnv+")")
	pos, command, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	t, pos, err := parseTarget(pos, command)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageErr("app takes only TARGET and flags")
	}
	if f.json || f.out != "" {
		return usageErr("--json and --out do not apply to app")
	}
	if _, err := f.protocolVersion(); err != nil {
		return err
	}
	if *bridgePath == "" {
		return usageErr("no --bridge: %s", appBridgeHelp)
	}
	bridge, err := readBridge(*bridgePath)
	if err != nil {
		return usageErr("%v", err)
	}
	host, err := loopbackHost(*addr)
	if err != nil {
		return usageErr("%v", err)
	}
	hostLn, err := net.Listen("tcp", *addr)
	if err != nil {
		return &exitError{code: exitConn, err: err}
	}
	defer hostLn.Close()
	sandboxLn, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return &exitError{code: exitConn, err: err}
	}
	defer sandboxLn.Close()

	// The server's questions during a call (elicitation) are answered
	// from --answer or --accept-defaults, else declined: the preview
	// does not read the terminal.
	if len(f.answers) == 0 && !f.acceptDefaults {
		f.decline = true
	}
	opts := client.Options{}
	apps.Declare(&opts)
	a := &asker{f: &f, out: stderr, mu: new(sync.Mutex)}
	a.options(&opts)
	cl, err := connect(ctx, t, &f, opts, stderr)
	if err != nil {
		return err
	}
	defer cl.Close()
	if cl.Era() == client.EraModern && !apps.Supported(cl) {
		// A modern connection knows the server's extensions from
		// server/discover, which a forced --era modern has not asked yet.
		_, _ = cl.Discover(ctx)
	}
	if !apps.Supported(cl) {
		fmt.Fprintf(stderr, "mcpkit app: %s does not advertise %s; its tools' views are shown anyway\n", t, apps.ExtensionID)
	}

	h := newAppHost(cl, bridge, "http://"+hostLn.Addr().String(), "http://"+sandboxLn.Addr().String())
	hostSrv, sandboxSrv := newHTTPServer(h.hostHandler()), newHTTPServer(h.sandboxHandler())
	fmt.Fprintf(stdout, "mcpkit app: open %s/ (views sandboxed on %s; Ctrl-C to stop)\n", h.hostOrigin, h.sandboxOrigin)
	done := make(chan error, 2)
	go func() { done <- hostSrv.Serve(hostLn) }()
	go func() { done <- sandboxSrv.Serve(sandboxLn) }()
	var serveErr error
	pending := 2
	select {
	case serveErr = <-done:
		pending--
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// Both servers end within shutdownGrace (a page's call in flight is
	// cancelled with its request); past it their connections are cut.
	for _, s := range []*http.Server{hostSrv, sandboxSrv} {
		if s.Shutdown(sctx) != nil {
			_ = s.Close()
		}
	}
	for ; pending > 0; pending-- {
		<-done
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return &exitError{code: exitConn, err: serveErr}
	}
	return nil
}

// readBridge reads the SDK bundle, within appMaxBridge, and checks that
// it is the host side of the MCP Apps SDK.
func readBridge(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--bridge: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, appMaxBridge+1))
	if err != nil {
		return nil, fmt.Errorf("--bridge: %w", err)
	}
	if len(b) > appMaxBridge {
		return nil, fmt.Errorf("--bridge %s is larger than %d bytes", path, appMaxBridge)
	}
	if !strings.Contains(string(b), "AppBridge") || !strings.Contains(string(b), "PostMessageTransport") {
		return nil, fmt.Errorf("--bridge %s does not export AppBridge and PostMessageTransport: %s", path, appBridgeHelp)
	}
	return b, nil
}

// loopbackHost returns the host of addr, which must be a loopback
// address: the preview relays the page's calls to the server with the
// user's credentials and must not be reachable from elsewhere.
func loopbackHost(addr string) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("--addr %q: the preview listens on a loopback IP address only (such as 127.0.0.1:0)", addr)
	}
	return host, nil
}
