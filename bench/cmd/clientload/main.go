// Command clientload drives one client of the client benchmarks (W1c,
// W3c, W7c, W8c) over loopback against benchserver -sdk clientraw, in
// closed loop: -c goroutines share one client (one http.Client tuned for
// them) and each makes its next call when the last one is answered. It
// reports calls/s, p50/p99 latency, and this process's CPU and
// allocations per call. Every answer is checked; an error stops the run.
//
//	GOMAXPROCS=1 taskset -c 1 clientload -addr-file /tmp/a -sdk mcpkit -w W1c -c 32 -d 10s
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/bench/clients"
)

// Result is one run, as a JSON line with -json.
type Result struct {
	SDK        string  `json:"sdk"`
	Workload   string  `json:"workload"`
	Conns      int     `json:"conns"`
	Rep        int     `json:"rep"`
	Calls      int     `json:"calls"`
	Seconds    float64 `json:"seconds"`
	PerSecond  float64 `json:"perSecond"`
	P50Ms      float64 `json:"p50Ms"`
	P99Ms      float64 `json:"p99Ms"`
	CPUMicros  float64 `json:"cpuMicrosPerCall"`
	AllocsCall float64 `json:"allocsPerCall"`
	BytesCall  float64 `json:"bytesPerCall"`
	GOMAXPROCS int     `json:"gomaxprocs"`
	// Rate is -rate: the calls a second asked for (0: closed loop).
	Rate float64 `json:"rate,omitempty"`
}

func main() {
	sdk := flag.String("sdk", "mcpkit", "client: "+strings.Join(clients.SDKs, ", "))
	w := flag.String("w", "W1c", "workload: "+strings.Join(clients.Workloads, ", "))
	addrFile := flag.String("addr-file", "", "read the server's address from this file")
	addr := flag.String("addr", "", "the server's address (host:port), when not -addr-file")
	conns := flag.Int("c", 32, "concurrent callers (closed loop)")
	dur := flag.Duration("d", 10*time.Second, "measured duration")
	warmup := flag.Duration("warmup", 2*time.Second, "warm-up before measuring")
	timeout := flag.Duration("timeout", 5*time.Second, "bound on each call")
	rep := flag.Int("rep", 1, "repetition number, for the report")
	asJSON := flag.Bool("json", false, "print the result as a JSON line")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the measured phase to this file")
	flag.Float64Var(&rate, "rate", 0, "calls a second, paced over the callers (0: closed loop, each caller calls again at once)")
	flag.Parse()
	if err := run(*sdk, *w, *addrFile, *addr, *conns, *dur, *warmup, *timeout, *rep, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "clientload:", err)
		os.Exit(1)
	}
}

// cpuProfile is -cpuprofile: where to write the measured phase's CPU
// profile (empty: none).
var cpuProfile string

// rate is -rate: with it, each of the c callers calls every c/rate
// seconds (staggered; one that falls behind calls again at once), so
// that clients are compared at the same calls a second, where the
// client's cost per call does not depend on how fast it goes.
var rate float64

// startProfile starts the CPU profile of -cpuprofile; the returned
// function stops it and closes the file.
func startProfile() (func() error, error) {
	if cpuProfile == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(cpuProfile)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

func run(sdk, w, addrFile, addr string, conns int, dur, warmup, timeout time.Duration, rep int, asJSON bool) error {
	if conns < 1 || conns > 4096 {
		return fmt.Errorf("-c must be 1..4096")
	}
	if addrFile != "" {
		b, err := os.ReadFile(addrFile)
		if err != nil {
			return err
		}
		addr = strings.TrimSpace(string(b))
	}
	if addr == "" {
		return fmt.Errorf("no server address (-addr or -addr-file)")
	}
	ctx := context.Background()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	c, err := clients.New(cctx, sdk, w, "http://"+addr, clients.Tuned(conns, nil))
	cancel()
	if err != nil {
		return err
	}
	defer c.Close()

	var interval time.Duration // between the calls of one caller, with -rate
	if rate > 0 {
		interval = time.Duration(float64(conns) / rate * float64(time.Second))
	}
	phase := func(d time.Duration, lat [][]time.Duration) (int, error) {
		start := time.Now()
		deadline := start.Add(d)
		var wg sync.WaitGroup
		errs := make([]error, conns)
		counts := make([]int, conns)
		for i := range conns {
			wg.Go(func() {
				next := start.Add(interval * time.Duration(i) / time.Duration(conns))
				for time.Now().Before(deadline) {
					if interval > 0 {
						if wait := time.Until(next); wait > 0 {
							time.Sleep(wait)
						}
						next = next.Add(interval)
					}
					cctx, cancel := context.WithTimeout(ctx, timeout)
					t0 := time.Now()
					err := c.Call(cctx)
					cancel()
					if err != nil {
						errs[i] = err
						return
					}
					counts[i]++
					if lat != nil {
						lat[i] = append(lat[i], time.Since(t0))
					}
				}
			})
		}
		wg.Wait()
		n := 0
		for i := range conns {
			if errs[i] != nil {
				return n, errs[i]
			}
			n += counts[i]
		}
		return n, nil
	}
	if _, err := phase(warmup, nil); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	lat := make([][]time.Duration, conns)
	for i := range lat {
		lat[i] = make([]time.Duration, 0, 1<<14)
	}
	runtime.GC()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	stopProfile, err := startProfile()
	if err != nil {
		return err
	}
	cpu0 := cpuTime()
	t0 := time.Now()
	n, err := phase(dur, lat)
	elapsed := time.Since(t0)
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&ms1)
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		return fmt.Errorf("after %d calls: %w", n, err)
	}
	if n == 0 {
		return fmt.Errorf("no call completed")
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	q := func(f float64) float64 { return float64(all[int(f*float64(len(all)-1))]) / 1e6 }
	r := Result{
		SDK: sdk, Workload: w, Conns: conns, Rep: rep, Calls: n, Seconds: elapsed.Seconds(),
		PerSecond: float64(n) / elapsed.Seconds(), P50Ms: q(0.50), P99Ms: q(0.99),
		CPUMicros:  float64(cpu.Microseconds()) / float64(n),
		AllocsCall: float64(ms1.Mallocs-ms0.Mallocs) / float64(n),
		BytesCall:  float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(n),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Rate:       rate,
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(r)
	}
	fmt.Printf("%-7s %-4s c=%d  %8.0f calls/s  p50 %.2f ms  p99 %.2f ms  %.1f µs CPU/call  %.0f allocs/call  %.0f B/call\n",
		sdk, w, conns, r.PerSecond, r.P50Ms, r.P99Ms, r.CPUMicros, r.AllocsCall, r.BytesCall)
	return nil
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
