// Command benchserver serves the benchmark's servers (package servers) on
// one SDK over Streamable HTTP: /mcp (session-less, both eras),
// /mcp-session (sessionful legacy) and the other workloads' endpoints.
// With -mem-endpoint it also serves GET /debug/bench-mem for W9 and the
// soak. It writes the address it listens on to -addr-file
// and runs until SIGINT/SIGTERM or -max-run; -cpuprofile profiles the run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/bench/servers"
)

func main() {
	sdk := flag.String("sdk", "mcpkit", "server: mcpkit, gosdk, mcpgo, raw, or clientraw (the client benchmarks' server)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	addrFile := flag.String("addr-file", "", "write the bound address here")
	maxRun := flag.Duration("max-run", 30*time.Minute, "exit after this long regardless")
	memEndpoint := flag.Bool("mem-endpoint", false, "serve GET "+MemPath+" (W9): GC, return memory to the OS, answer the runtime's memory figures")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	flag.Parse()

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}

	h, closeFn, err := servers.New(*sdk)
	if err != nil {
		log.Fatal(err)
	}
	if *memEndpoint {
		mux := http.NewServeMux()
		mux.HandleFunc("GET "+MemPath, servers.ServeMem)
		mux.Handle("/", h)
		h = mux
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if *addrFile != "" {
		tmp := *addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(ln.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
		if err := os.Rename(tmp, *addrFile); err != nil {
			log.Fatal(err)
		}
	} else {
		fmt.Println(ln.Addr())
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(discard{}, "", 0)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		select {
		case <-ctx.Done():
		case <-time.After(*maxRun):
		}
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Print(err)
	}
	closeFn()
}

// MemPath is the memory endpoint of W9 and the soak (with -mem-endpoint
// only, so that no other workload routes through the extra mux).
const MemPath = servers.MemPath

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
