// Command soak runs the soak test (package soak) against benchserver's
// /mcp-soak endpoint: a mixed load of legacy sessions, modern calls, SSE
// streams, MRTR, cancellations and disconnects, for -duration at
// -fraction of the peak it first measures (or at -rate), every answer
// verified. It then checks that the server's goroutines and heap are back
// at their baseline, prints a summary and exits 1 if any check failed (2
// if the run could not be made).
//
//	benchserver -sdk mcpkit -mem-endpoint -addr-file /tmp/soak.addr &
//	soak -addr-file /tmp/soak.addr -duration 10m
//
// soak.sh does the same with the server and the load pinned to one core
// each.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/bench/servers"
	"github.com/mcpkit/mcpkit/bench/soak"
)

func main() {
	var c soak.Config
	addr := flag.String("addr", "", "server address host:port (loopback)")
	addrFile := flag.String("addr-file", "", "read the server address from this file")
	flag.DurationVar(&c.Duration, "duration", 10*time.Minute, "soak duration (open loop)")
	flag.Float64Var(&c.Rate, "rate", 0, "operations per second; 0: -fraction of the peak measured first")
	flag.Float64Var(&c.Fraction, "fraction", 0.8, "fraction of the measured peak (with -rate 0)")
	flag.DurationVar(&c.PeakDuration, "peak-duration", 10*time.Second, "closed-loop peak measurement")
	flag.IntVar(&c.PeakWorkers, "peak-workers", 16, "closed-loop workers (warm-up and peak)")
	flag.IntVar(&c.Workers, "workers", 32, "open-loop workers: the most operations in flight (more lowers the throughput of this 2-core machine)")
	flag.DurationVar(&c.Warmup, "warmup", 2*time.Second, "closed-loop warm-up before the baseline")
	flag.Int64Var(&c.MaxOps, "max-ops", 0, "if > 0, end each phase after this many operations")
	mix := flag.String("mix", soak.DefaultMix.String(), "weights of the kinds of operation")
	flag.DurationVar(&c.Timeout, "timeout", 10*time.Second, "bound of each operation")
	flag.Uint64Var(&c.Seed, "seed", 1, "random seed")
	flag.IntVar(&c.Steps, "steps", 10, "progress notifications of an sse operation")
	flag.IntVar(&c.SlowSteps, "slow-steps", 20, "notifications of the slow call that cancel and disconnect interrupt")
	flag.IntVar(&c.SlowDelayMs, "slow-delay-ms", 5, "milliseconds between two of them")
	flag.Float64Var(&c.LegacyCancel, "legacy-cancel", 0.5, "share of legacy sessions that cancel a call mid-stream")
	flag.Int64Var(&c.MaxUnexpected, "max-errors", 100, "stop after this many unexpected errors")
	flag.DurationVar(&c.Settle, "settle", 30*time.Second, "bound of the wait for the server to settle after the load")
	flag.IntVar(&c.GoroutineTolerance, "goroutine-tolerance", 2, "server goroutines allowed above the baseline after the load")
	heapMiB := flag.Float64("heap-slack-mib", 1, "server heap allowed above the baseline after the load: this many MiB …")
	flag.Float64Var(&c.HeapSlackFraction, "heap-slack-fraction", 0.25, "… or this fraction of the baseline, whichever is more")
	flag.IntVar(&c.ServerPID, "pid", 0, "server process id, for its CPU time (/proc/<pid>/stat)")
	quiet := flag.Bool("q", false, "no progress lines")
	flag.Parse()

	if *addrFile != "" {
		b, err := os.ReadFile(*addrFile)
		if err != nil {
			log.Fatal(err)
		}
		*addr = strings.TrimSpace(string(b))
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		log.Fatalf("need -addr or -addr-file with a loopback IP address and a port (got %q)", *addr)
	}
	if c.Mix, err = soak.ParseMix(*mix); err != nil {
		log.Fatal(err)
	}
	c.HeapSlackBytes = uint64(*heapMiB * (1 << 20))
	c.URL = "http://" + *addr + servers.PathSoak
	c.MemURL = "http://" + *addr + servers.MemPath
	if !*quiet {
		c.Log = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := soak.Run(ctx, c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	rep.Print(os.Stdout)
	if !rep.Pass {
		os.Exit(1)
	}
}
