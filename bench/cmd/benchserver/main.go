// Command benchserver serves the benchmark's servers (package servers) on
// one SDK over Streamable HTTP: /mcp (session-less, both eras),
// /mcp-session (sessionful legacy) and the other workloads' endpoints.
// With -mem-endpoint it also serves GET /debug/bench-mem for W9 and the
// soak. -gateway-upstream serves an mcpkit gateway instead, and
// -relay-upstream a plain net/http reverse proxy (the gateway's floor), both
// in front of an upstream benchserver. It writes the address it listens on to -addr-file
// and runs until SIGINT/SIGTERM or -max-run; -cpuprofile profiles the run.
package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/bench/servers"
	redisstore "github.com/mcpkit/mcpkit/store/redis"
)

func main() {
	sdk := flag.String("sdk", "mcpkit", "server: mcpkit, gosdk, mcpgo, raw, or clientraw (the client benchmarks' server)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	addrFile := flag.String("addr-file", "", "write the bound address here")
	maxRun := flag.Duration("max-run", 30*time.Minute, "exit after this long regardless")
	memEndpoint := flag.Bool("mem-endpoint", false, "serve GET "+MemPath+" (W9): GC, return memory to the OS, answer the runtime's memory figures")
	cluster := flag.Bool("cluster", false, "serve one instance of the multi-instance workloads (W3 on /mcp-session, WT on /mcp-tasks), mcpkit's or, with -sdk raw, the raw ceiling's (servers.RawCluster); with -redis, on Redis")
	redisAddr := flag.String("redis", "", "with -cluster: the redis-server (host:port) whose stores the instances share; empty: in memory")
	redisPrefix := flag.String("redis-prefix", "benchcluster:", "with -redis: the key and channel prefix")
	gwUpstream := flag.String("gateway-upstream", "", "serve an mcpkit gateway (on /mcp and /mcp-session) in front of the mcpkit upstream at this URL, instead of -sdk")
	relayUpstream := flag.String("relay-upstream", "", "serve a plain net/http reverse proxy (every path) in front of the upstream at this URL, instead of -sdk: the gateway workload's floor")
	gwVersion := flag.String("gateway-version", "2026-07-28", "with -gateway-upstream: the protocol version spoken upstream")
	timed := flag.Bool("timing", false, "with -gateway-upstream or -relay-upstream: time each request, its upstream round trips and the difference; GET "+TimingPath+" answers the percentiles and starts again")
	traceFile := flag.String("trace", "", "write an execution trace of the whole run to this file (go tool trace; keep runs short)")
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

	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			log.Fatal(err)
		}
		if err := trace.Start(f); err != nil {
			log.Fatal(err)
		}
		defer func() { trace.Stop(); f.Close() }()
	}

	var (
		h       http.Handler
		closeFn func()
		err     error
		tm      *timing
	)
	hc := tunedClient()
	if *timed {
		tm = newTiming()
		hc.Transport = tm.transport(hc.Transport)
	}
	switch {
	case *cluster:
		h, closeFn, err = clusterInstance(*sdk, *redisAddr, *redisPrefix)
	case *gwUpstream != "":
		h, closeFn, err = servers.Gateway(*gwUpstream, *gwVersion, hc)
	case *relayUpstream != "":
		h, err = relay(*relayUpstream, hc)
		closeFn = func() {}
	default:
		h, closeFn, err = servers.New(*sdk)
	}
	if err != nil {
		log.Fatal(err)
	}
	if tm != nil {
		h = tm.handler(h)
	}
	if *memEndpoint {
		mux := http.NewServeMux()
		mux.HandleFunc("GET "+MemPath, servers.ServeMem)
		mux.Handle("/", h)
		h = mux
	}
	servers.Serve(&http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(discard{}, "", 0)}, *addr, *addrFile, *maxRun)
	closeFn()
}

// MemPath is the memory endpoint of W9 and the soak (with -mem-endpoint
// only, so that no other workload routes through the extra mux).
const MemPath = servers.MemPath

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// clusterInstance is one instance of the multi-instance workloads: on the
// redis-server at addr (sessions, events, tasks and the broker under
// prefix), or in memory when addr is empty. sdk "raw" is the raw ceiling
// (servers.RawCluster), anything else mcpkit.
func clusterInstance(sdk, addr, prefix string) (http.Handler, func(), error) {
	if sdk == "raw" && addr == "" {
		return servers.RawCluster(nil, prefix)
	}
	if addr == "" {
		return servers.Cluster(servers.ClusterStores{})
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 64})
	if sdk == "raw" {
		h, closeFn, err := servers.RawCluster(rdb, prefix)
		if err != nil {
			rdb.Close()
			return nil, nil, err
		}
		return h, func() { closeFn(); rdb.Close() }, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	br, err := redisstore.NewBroker(ctx, rdb, &redisstore.BrokerOptions{Prefix: prefix})
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	h, closeFn, err := servers.Cluster(servers.ClusterStores{
		Sessions: redisstore.NewSessionStore(rdb, &redisstore.SessionStoreOptions{Prefix: prefix}),
		Events:   redisstore.NewEventStore(rdb, &redisstore.EventStoreOptions{Prefix: prefix}),
		Broker:   br,
		Tasks:    redisstore.NewTaskStore(rdb, &redisstore.TaskStoreOptions{Prefix: prefix}),
	})
	if err != nil {
		br.Close()
		rdb.Close()
		return nil, nil, err
	}
	return h, func() {
		closeFn()
		br.Close()
		rdb.Close()
	}, nil
}

// tunedClient is the gateway's upstream http.Client: enough idle
// connections for the load generator's callers.
func tunedClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
	return &http.Client{Transport: tr}
}
