// Command rrproxy is the multi-instance workloads' load balancer: a
// reverse proxy that sends each request to the next of -backends in turn,
// with no stickiness, so that consecutive requests of one session land on
// different instances (cluster.sh). It writes the address it listens on to
// -addr-file and runs until SIGINT/SIGTERM or -max-run.
package main

import (
	"flag"
	"log"
	"net/http"
	"net/url"
	"os"
	"strings"
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

	servers.Serve(&http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}, *addr, *addrFile, *maxRun)
	tr.CloseIdleConnections()
}
