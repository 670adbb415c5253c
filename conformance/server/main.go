// Command server is mcpkit's fixture for the official MCP conformance
// suite: one endpoint, /mcp, serving every tool, resource and prompt the
// server scenarios expect, written with the public mcpkit API as any user
// would write them. With -stdio it serves one session on standard input
// and output instead (the upstream of conformance/gateway).
//
//	go run ./conformance/server -addr 127.0.0.1:3000
//	go run ./conformance/server -stdio
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/stdio"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3000", "listen address")
	verbose := flag.Bool("v", false, "log protocol diagnostics to stderr")
	addrFile := flag.String("addr-file", "", "write the address actually bound to this file (for -addr with port 0)")
	useStdio := flag.Bool("stdio", false, "serve one session on standard input and output instead of HTTP")
	flag.Parse()

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	s := newServer(logger)
	if *useStdio {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := s.Serve(ctx, stdio.New(nil)); err != nil && !errors.Is(err, context.Canceled) {
			log.Fatal(err)
		}
		return
	}
	h := streamhttp.NewHandler(s, &streamhttp.Options{RetryInterval: 500 * time.Millisecond})
	defer h.Close()

	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(ln.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.Close()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("conformance server listening on http://%s/mcp", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

func newServer(logger *slog.Logger) *server.Server {
	s := server.New(&server.Options{
		Info:    mcp.Implementation{Name: "mcpkit-conformance", Version: "0.1.0"},
		Logger:  logger,
		Logging: true,
	})
	addTools(s)
	addModernTools(s)
	addMRTRTools(s)
	addTaskTools(s)
	addResources(s)
	addPrompts(s)
	addSkills(s)
	s.SetCompletionHandler(func(ctx context.Context, req *server.CompleteRequest) (*mcp.CompleteResult, error) {
		var values []string
		for _, v := range []string{"alpha", "beta", "gamma"} {
			if len(req.Params.Argument.Value) <= len(v) && v[:len(req.Params.Argument.Value)] == req.Params.Argument.Value {
				values = append(values, v)
			}
		}
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: values}}, nil
	})
	return s
}
