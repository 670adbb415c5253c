// Command gateway serves the gateway package on Streamable HTTP in front
// of one upstream, with no prefix, so that the official conformance
// suite's server scenarios run through it: every name, URI, result and
// input request the suite sees has crossed the gateway twice.
//
// The upstream is a stdio command (the arguments after the flags) or a
// Streamable HTTP URL (-upstream-url). conformance/run launches mcpkit's
// conformance server as the command:
//
//	go run ./conformance/gateway -addr 127.0.0.1:3001 -- conformance-server -stdio
//	go run ./conformance/gateway -addr 127.0.0.1:3001 -upstream-url http://127.0.0.1:3000/mcp
//
// With -upstream-version 2025-11-25 the gateway speaks the legacy era to
// the upstream (initialize, one session): a 2026-07-28 client's calls then
// cross the era bridge (the upstream's requests become input-required
// results, the upstream call held pending).
//
// The suite is one anonymous client that leaves input rounds unanswered
// on purpose, scenario after scenario: the per-client limits are raised
// far above their defaults (which would refuse it after a few), and so is
// a command's MaxConnections (each unanswered round of a legacy upstream
// holds a connection, a process, until the input timeout).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3000", "listen address")
	addrFile := flag.String("addr-file", "", "write the address actually bound to this file (for -addr with port 0), once the upstream is ready")
	upstreamURL := flag.String("upstream-url", "", "the upstream's Streamable HTTP URL (instead of a command after the flags)")
	version := flag.String("upstream-version", "", "the protocol revision spoken to the upstream (default: detect its era; 2025-11-25 makes it a legacy upstream)")
	verbose := flag.Bool("v", false, "log protocol diagnostics to stderr")
	flag.Parse()

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	up := gateway.Upstream{Name: "conformance", Stderr: os.Stderr, ProtocolVersion: *version}
	switch {
	case *upstreamURL != "" && flag.NArg() > 0:
		log.Fatal("gateway: give the upstream as a command or as -upstream-url, not both")
	case *upstreamURL != "":
		up.URL = *upstreamURL
	case flag.NArg() > 0:
		up.Command = flag.Args()
		up.MaxConnections = gateway.DefaultMaxInFlight
	default:
		log.Fatal("gateway: no upstream: give a command after the flags or -upstream-url")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	g, err := gateway.New(&gateway.Options{
		Upstreams:            []gateway.Upstream{up},
		MaxPendingPerClient:  gateway.DefaultMaxPending,
		MaxInFlightPerClient: gateway.DefaultMaxInFlight,
		Server: &server.Options{
			Info:   mcp.Implementation{Name: "mcpkit-conformance-gateway", Version: "0.1.0"},
			Logger: logger,
		},
		Logger: logger,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	if err := g.Start(ctx); err != nil {
		log.Fatal(err)
	}
	if err := ready(g); err != nil {
		log.Fatal(err)
	}
	h := streamhttp.NewHandler(g.Server(), &streamhttp.Options{RetryInterval: 500 * time.Millisecond})
	defer h.Close()

	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	// The address is written only now, with the upstream's items
	// registered, so that the suite never sees a half-filled server.
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(ln.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.Close()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("conformance gateway listening on http://%s/mcp", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// ready reports the upstream's failure when Start's one attempt did not
// connect it: the fixture exits rather than serve an empty server.
func ready(g *gateway.Gateway) error {
	for _, h := range g.Health() {
		if h.State != gateway.StateReady {
			return fmt.Errorf("gateway: upstream %s is %s: %s", h.Name, h.State, h.Err)
		}
	}
	return nil
}
