// Command rrproxy is the multi-instance workloads' load balancer: a
// reverse proxy that sends each request to the next of -backends in turn,
// with no stickiness, so that consecutive requests of one session land on
// different instances (cluster.sh). It writes the address it listens on to
// -addr-file and runs until SIGINT/SIGTERM or -max-run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/bench/servers"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	addrFile := flag.String("addr-file", "", "write the bound address here")
	backends := flag.String("backends", "", "comma-separated host:port of the instances")
	maxRun := flag.Duration("max-run", 30*time.Minute, "exit after this long regardless")
	flag.Parse()

	var urls []*url.URL
	for b := range strings.SplitSeq(*backends, ",") {
		if b = strings.TrimSpace(b); b != "" {
			urls = append(urls, &url.URL{Scheme: "http", Host: b})
		}
	}
	if len(urls) == 0 {
		log.Fatal("need -backends")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 1024, 256
	p := servers.RoundRobin(urls, tr)
	p.ErrorLog = log.New(os.Stderr, "rrproxy: ", 0)

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
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
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
	tr.CloseIdleConnections()
}
