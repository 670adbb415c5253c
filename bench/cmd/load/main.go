// Command load is the benchmark's load generator. Closed loop (default):
// -c workers, each on its own keep-alive connection, send one pre-built
// request after another for -warmup then -d, verifying every answer.
// Open loop (-rate R): requests are due at a fixed rate R/s, spread over
// the -c connections; latency counts from when a request was due, so a
// stalled server is not hidden (no coordinated omission).
//
// With -pid it also reads the server's CPU time (/proc/<pid>/stat) over
// the measured window and its VmRSS/VmHWM at the end.
//
// W9 (-w W9) is not a request loop: it opens -sessions legacy sessions
// over -c keep-alive connections (initialize and notifications/initialized
// each), closes the connections and reads the server's VmRSS and VmHWM
// before and after, each time right after the server's own GC (the
// server needs -mem-endpoint), and finally calls every session once to
// check that all are alive.
//
// Output: a human summary, or one JSON object with -json.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/bench/workload"
)

// ProcCPU is one -pids process's CPU over the measured window.
type ProcCPU struct {
	Name     string  `json:"name"`
	PID      int     `json:"pid"`
	CPUPer1k float64 `json:"cpu_s_per_1k"`
	CPUUtil  float64 `json:"cpu_util"`
}

// parsePids reads -pids: name=pid pairs separated by commas.
func parsePids(s string) []ProcCPU {
	var ps []ProcCPU
	for kv := range strings.SplitSeq(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		name, v, ok := strings.Cut(kv, "=")
		pid, err := strconv.Atoi(v)
		if !ok || err != nil || pid <= 0 {
			log.Fatalf("-pids: want name=pid, got %q", kv)
		}
		ps = append(ps, ProcCPU{Name: name, PID: pid})
	}
	return ps
}

// Result is one run's summary.
type Result struct {
	Server     string  `json:"server"`
	Workload   string  `json:"workload"`
	Mode       string  `json:"mode"`
	Conns      int     `json:"conns"`
	Rate       float64 `json:"rate,omitempty"`
	Seconds    float64 `json:"seconds"`
	Requests   int     `json:"requests"`
	Errors     int64   `json:"errors"`
	Late       int64   `json:"late,omitempty"`
	RPS        float64 `json:"rps"`
	P50ms      float64 `json:"p50_ms"`
	P99ms      float64 `json:"p99_ms"`
	P999ms     float64 `json:"p999_ms"`
	Maxms      float64 `json:"max_ms"`
	CPUPer1k   float64 `json:"cpu_s_per_1k,omitempty"`
	CPUUtil    float64 `json:"cpu_util,omitempty"`
	LoadUtil   float64 `json:"load_cpu_util"`
	RSSkB      int64   `json:"rss_kb,omitempty"`
	HWMkB      int64   `json:"hwm_kb,omitempty"`
	FirstError string  `json:"first_error,omitempty"`
	// Procs: the CPU of the other processes named by -pids (instances
	// behind a proxy, redis-server, an upstream), over the same window.
	Procs []ProcCPU `json:"procs,omitempty"`
	// TaskPolls (WT): tasks/get polls per task lifecycle, on average.
	TaskPolls   float64 `json:"task_polls,omitempty"`
	Description string  `json:"description"`
	Load        string  `json:"load,omitempty"`
	Rep         int     `json:"rep,omitempty"`

	// W9 (mode "sessions"): RPS is sessions opened per second and
	// CPUPer1k the server's CPU per 1,000 opened; RSSkB and HWMkB are read
	// after the server's GC.
	Sessions        int     `json:"sessions,omitempty"`
	RSSBeforekB     int64   `json:"rss_before_kb,omitempty"`
	HWMBeforekB     int64   `json:"hwm_before_kb,omitempty"`
	RSSNoGCkB       int64   `json:"rss_nogc_kb,omitempty"`
	HeapBefore      int64   `json:"heap_before,omitempty"`
	HeapAfter       int64   `json:"heap_after,omitempty"`
	GoroutinesPre   int     `json:"goroutines_before,omitempty"`
	GoroutinesPost  int     `json:"goroutines_after,omitempty"`
	RSSPerSession   float64 `json:"rss_b_per_session,omitempty"`
	NoGCPerSession  float64 `json:"rss_nogc_b_per_session,omitempty"`
	HeapPerSession  float64 `json:"heap_b_per_session,omitempty"`
	GoroutinesPerSn float64 `json:"goroutines_per_session,omitempty"`
}

func main() {
	addr := flag.String("addr", "", "server address host:port; several, comma-separated: each worker keeps a connection to each and sends each request to the next in turn (the instances of cluster.sh without a proxy)")
	addrFile := flag.String("addr-file", "", "read the server address (or comma-separated addresses) from this file")
	wname := flag.String("w", "W1", "workload: W1, W2, W3, W4, W5, W6, W6p, W7, W8, WT (task lifecycle, benchserver -cluster) or W9 (idle sessions, with -sessions and -pid)")
	conns := flag.Int("c", 32, "concurrent connections (workers)")
	dur := flag.Duration("d", 10*time.Second, "measured duration")
	warmup := flag.Duration("warmup", 2*time.Second, "warm-up before measuring")
	rate := flag.Float64("rate", 0, "open loop: requests per second (0: closed loop)")
	pid := flag.Int("pid", 0, "server process id, for CPU and RSS")
	label := flag.String("server", "", "server name, for the output")
	timeout := flag.Duration("timeout", 5*time.Second, "per-request deadline")
	maxErrors := flag.Int64("max-errors", 1000, "stop after this many errors")
	asJSON := flag.Bool("json", false, "print one JSON object")
	loadTag := flag.String("load-tag", "", "label of the offered load, for the output (e.g. 50%)")
	rep := flag.Int("rep", 0, "repetition number, for the output")
	sessions := flag.Int("sessions", 10000, "W9: idle sessions to open")
	settle := flag.Duration("settle", time.Second, "W9: pause after closing the connections, before reading memory")
	pids := flag.String("pids", "", "other processes whose CPU per 1k requests to report: name=pid,name=pid (instances, redis-server, an upstream)")
	flag.Parse()

	w, ok := workload.All[*wname]
	if !ok {
		log.Fatalf("unknown workload %q", *wname)
	}
	if *addrFile != "" {
		b, err := os.ReadFile(*addrFile)
		if err != nil {
			log.Fatal(err)
		}
		*addr = strings.TrimSpace(string(b))
	}
	addrs := splitAddrs(*addr)
	if len(addrs) > 1 && (w.Sessions || w.Churn || w.MRTR || w.List || *rate > 0) {
		log.Fatal("several addresses (round robin over instances) need a closed-loop request workload (W1–W3, W5, W6, WT)")
	}
	if *addr == "" || *conns < 1 || *dur <= 0 || *dur > time.Hour || *warmup < 0 || *conns > 10000 {
		log.Fatal("need -addr or -addr-file, 1 ≤ -c ≤ 10000, 0 < -d ≤ 1h, -warmup ≥ 0")
	}
	var res Result
	if w.Sessions {
		if *sessions < 1 || *sessions > 100000 || *pid == 0 {
			log.Fatal("W9 needs 1 ≤ -sessions ≤ 100000 and the server's -pid")
		}
		res = runSessions(w, *addr, *sessions, *conns, *pid, *timeout, *settle)
	} else {
		res = run(w, addrs, *conns, *warmup, *dur, *rate, *pid, parsePids(*pids), *timeout, *maxErrors)
	}
	res.Server, res.Load, res.Rep = *label, *loadTag, *rep
	if *asJSON {
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
		return
	}
	fmt.Printf("%s %s (%s) on %s, %s, %d conns\n", res.Server, res.Workload, res.Description, *addr, res.Mode, res.Conns)
	if w.Sessions {
		fmt.Printf("  %d sessions opened in %.1fs (%.0f/s), %d errors; server %.3f CPU-s per 1k opened\n", res.Sessions, res.Seconds, res.RPS, res.Errors, res.CPUPer1k)
		fmt.Printf("  VmRSS %d → %d kB (%d kB before the server's GC), VmHWM %d → %d kB\n", res.RSSBeforekB, res.RSSkB, res.RSSNoGCkB, res.HWMBeforekB, res.HWMkB)
		fmt.Printf("  per session: RSS %.0f B (%.0f B before GC), heap+stacks %.0f B, %.2f goroutines\n", res.RSSPerSession, res.NoGCPerSession, res.HeapPerSession, res.GoroutinesPerSn)
		if res.FirstError != "" {
			fmt.Printf("  first error: %s\n", res.FirstError)
		}
		return
	}
	fmt.Printf("  %d requests in %.1fs: %.0f req/s, %d errors", res.Requests, res.Seconds, res.RPS, res.Errors)
	if res.Late > 0 {
		fmt.Printf(", %d sent late", res.Late)
	}
	fmt.Printf("\n  latency p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  max %.3f ms\n", res.P50ms, res.P99ms, res.P999ms, res.Maxms)
	if *pid != 0 {
		fmt.Printf("  server: %.3f CPU-s per 1k requests (%.0f%% of a core), RSS %d kB, HWM %d kB\n", res.CPUPer1k, 100*res.CPUUtil, res.RSSkB, res.HWMkB)
	}
	for _, p := range res.Procs {
		fmt.Printf("  %s (pid %d): %.3f CPU-s per 1k requests (%.0f%% of a core)\n", p.Name, p.PID, p.CPUPer1k, 100*p.CPUUtil)
	}
	fmt.Printf("  load generator: %.0f%% of a core\n", 100*res.LoadUtil)
	if res.FirstError != "" {
		fmt.Printf("  first error: %s\n", res.FirstError)
	}
}

type worker struct {
	lat []time.Duration
}

// splitAddrs reads -addr: one host:port or several, comma-separated.
func splitAddrs(s string) []string {
	var out []string
	for a := range strings.SplitSeq(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// dialAll connects to each of addrs; on an error it closes what it
// opened.
func dialAll(addrs []string) ([]*workload.Conn, error) {
	cs := make([]*workload.Conn, 0, len(addrs))
	for _, a := range addrs {
		c, err := workload.Dial(a)
		if err != nil {
			closeAll(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func closeAll(cs []*workload.Conn) {
	for _, c := range cs {
		c.Close()
	}
}

func run(w workload.Workload, addrs []string, conns int, warmup, dur time.Duration, rate float64, pid int, procs []ProcCPU, timeout time.Duration, maxErrors int64) Result {
	start := time.Now()
	measureFrom := start.Add(warmup)
	end := measureFrom.Add(dur)
	var (
		errs     atomic.Int64
		firstErr atomic.Value
		late     atomic.Int64
		stop     atomic.Bool
		polls    atomic.Int64 // WT: tasks/get polls, over every cycle
		cycles   atomic.Int64 // WT: cycles completed, warm-up included
	)
	fail := func(err error) {
		firstErr.CompareAndSwap(nil, err.Error())
		if errs.Add(1) >= maxErrors {
			stop.Store(true)
		}
	}
	// Open loop: a dispatcher sends due times.
	var due chan time.Time
	if rate > 0 {
		due = make(chan time.Time, 1<<16)
		go func() {
			defer close(due)
			interval := time.Duration(float64(time.Second) / rate)
			for i := 0; ; i++ {
				t := start.Add(time.Duration(i) * interval)
				if !t.Before(end) || stop.Load() {
					return
				}
				if d := time.Until(t); d > 0 {
					time.Sleep(d)
				}
				select {
				case due <- t:
				default:
					late.Add(1) // the backlog is full: the server is far behind
				}
			}
		}()
	}
	// CPU sample at the start of the measured window.
	var cpu0, self0 float64
	self := os.Getpid()
	cpuReady := make(chan struct{})
	go func() {
		time.Sleep(time.Until(measureFrom))
		cpu0, self0 = workload.CPUSeconds(pid), workload.CPUSeconds(self)
		for i := range procs {
			procs[i].CPUUtil = workload.CPUSeconds(procs[i].PID) // the start, for now
		}
		close(cpuReady)
	}()

	workers := make([]*worker, conns)
	var wg sync.WaitGroup
	for i := range workers {
		wk := &worker{lat: make([]time.Duration, 0, 1<<14)}
		workers[i] = wk
		wg.Go(func() {
			// One connection per address; with several, each request
			// goes to the next (round robin over the instances, as
			// rrproxy does, with no proxy hop), the session opened on
			// one of them (worker i's on instance i mod n).
			var cs []*workload.Conn
			var reqs [][]byte // per connection: w's request on the session
			var sid string
			var hs [][2]string // the session's headers (WT over several)
			turn := 0
			defer func() { closeAll(cs) }()
			for !stop.Load() {
				if cs == nil {
					var err error
					if cs, err = dialAll(addrs); err != nil {
						fail(err)
						time.Sleep(10 * time.Millisecond)
						continue
					}
					sid, turn = "", i
					if w.Session {
						if sid, err = cs[i%len(cs)].OpenSession(w.Path, time.Now().Add(timeout)); err != nil {
							fail(err)
							closeAll(cs)
							cs = nil
							time.Sleep(10 * time.Millisecond)
							continue
						}
						turn++ // the next request goes to the next instance
					}
					reqs = reqs[:0]
					for _, c := range cs {
						reqs = append(reqs, w.Request(c.Addr(), sid))
					}
					hs = append([][2]string{{"Mcp-Session-Id", sid}}, w.Headers...)
				}
				c := cs[turn%len(cs)]
				var t0 time.Time
				if due != nil {
					d, ok := <-due
					if !ok {
						return
					}
					t0 = d
				} else {
					t0 = time.Now()
					if !t0.Before(end) {
						return
					}
				}
				var err error
				deadline := time.Now().Add(timeout)
				if w.Task && len(cs) > 1 {
					var n int
					n, err = workload.TaskLifecycle(func(body []byte) (int, []byte, error) {
						c := cs[turn%len(cs)]
						turn++
						return c.Do(workload.BuildRequest(c.Addr(), w.Path, hs, body), deadline)
					})
					if err == nil {
						polls.Add(int64(n))
						cycles.Add(1)
					}
				} else if w.Task {
					var n int
					n, err = c.TaskCycle(w, sid, deadline)
					if err == nil {
						polls.Add(int64(n))
						cycles.Add(1)
					}
				} else if w.Churn {
					err = c.Cycle(w, deadline)
				} else if w.MRTR {
					err = c.MRTRCycle(w, deadline)
				} else if w.List {
					err = c.ListCycle(w, deadline)
				} else {
					var st int
					var body []byte
					if st, body, err = c.Do(reqs[turn%len(cs)], deadline); err == nil {
						err = w.Check(st, body)
					}
					turn++
				}
				t1 := time.Now()
				if err != nil {
					fail(err)
					closeAll(cs)
					cs = nil
					continue
				}
				if !t0.Before(measureFrom) && t1.Before(end.Add(timeout)) {
					wk.lat = append(wk.lat, t1.Sub(t0))
				}
			}
		})
	}
	wg.Wait()
	<-cpuReady
	elapsed := time.Since(measureFrom)
	if rate == 0 || elapsed < dur {
		elapsed = dur // closed loop: only requests started in the window count
	}
	cpu1, self1 := workload.CPUSeconds(pid), workload.CPUSeconds(self)

	var all []time.Duration
	for _, wk := range workers {
		all = append(all, wk.lat...)
	}
	slices.Sort(all)
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		i := int(p * float64(len(all)))
		if i >= len(all) {
			i = len(all) - 1
		}
		return float64(all[i]) / 1e6
	}
	res := Result{
		Workload: w.Name, Description: w.Desc, Mode: "closed", Conns: conns,
		Seconds: elapsed.Seconds(), Requests: len(all), Errors: errs.Load(), Late: late.Load(),
		RPS: float64(len(all)) / elapsed.Seconds(), P50ms: pct(0.50), P99ms: pct(0.99), P999ms: pct(0.999),
	}
	if len(all) > 0 {
		res.Maxms = float64(all[len(all)-1]) / 1e6
	}
	if rate > 0 {
		res.Mode, res.Rate = "open", rate
	}
	if s, ok := firstErr.Load().(string); ok {
		res.FirstError = workload.Trim(s)
	}
	res.LoadUtil = (self1 - self0) / elapsed.Seconds()
	for i := range procs {
		d := workload.CPUSeconds(procs[i].PID) - procs[i].CPUUtil
		procs[i].CPUUtil = d / elapsed.Seconds()
		if len(all) > 0 {
			procs[i].CPUPer1k = d / float64(len(all)) * 1000
		}
	}
	res.Procs = procs
	if n := cycles.Load(); n > 0 {
		res.TaskPolls = float64(polls.Load()) / float64(n)
	}
	if pid != 0 && len(all) > 0 {
		res.CPUPer1k = (cpu1 - cpu0) / float64(len(all)) * 1000
		res.CPUUtil = (cpu1 - cpu0) / elapsed.Seconds()
		res.RSSkB, res.HWMkB = memory(pid)
	}
	return res
}

// memory returns VmRSS and VmHWM of pid in kB.
func memory(pid int) (rss, hwm int64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm
}

// memPath is benchserver's W9 memory endpoint.
const memPath = "/debug/bench-mem"

type serverMem struct {
	HeapAlloc  int64 `json:"heap_alloc"`
	StackInuse int64 `json:"stack_inuse"`
	Goroutines int   `json:"goroutines"`
}

// readServerMem has the server collect garbage and return free memory to
// the OS, and returns its live heap, stacks and goroutines.
func readServerMem(addr string, timeout time.Duration) (serverMem, error) {
	var m serverMem
	c := &http.Client{Timeout: max(timeout, 30*time.Second)}
	resp, err := c.Get("http://" + addr + memPath)
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return m, fmt.Errorf("%s: status %d (is the server run with -mem-endpoint?)", memPath, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || m.HeapAlloc == 0 {
		return m, fmt.Errorf("%s: bad answer (%v)", memPath, err)
	}
	c.CloseIdleConnections()
	return m, nil
}

// runSessions is W9: n idle legacy sessions, the server's memory before
// and after.
func runSessions(w workload.Workload, addr string, n, conns, pid int, timeout, settle time.Duration) Result {
	res := Result{Workload: w.Name, Description: w.Desc, Mode: "sessions", Conns: conns, Sessions: n}
	fail := func(err error) Result {
		res.Errors++
		if res.FirstError == "" {
			res.FirstError = workload.Trim(err.Error())
		}
		return res
	}
	// Warm up whatever is built lazily, with one session per connection.
	if _, err := workload.OpenSessions(addr, w.Path, conns, conns, timeout); err != nil {
		return fail(fmt.Errorf("warm-up: %w", err))
	}
	time.Sleep(settle)
	before, err := readServerMem(addr, timeout)
	if err != nil {
		return fail(err)
	}
	res.RSSBeforekB, res.HWMBeforekB = memory(pid)
	res.HeapBefore, res.GoroutinesPre = before.HeapAlloc+before.StackInuse, before.Goroutines

	cpu0, self0 := workload.CPUSeconds(pid), workload.CPUSeconds(os.Getpid())
	t0 := time.Now()
	sids, err := workload.OpenSessions(addr, w.Path, n, conns, timeout)
	elapsed := time.Since(t0)
	cpu1, self1 := workload.CPUSeconds(pid), workload.CPUSeconds(os.Getpid())
	if err != nil {
		return fail(err)
	}
	res.Seconds, res.Requests = elapsed.Seconds(), n
	res.RPS = float64(n) / elapsed.Seconds()
	res.CPUPer1k = (cpu1 - cpu0) / float64(n) * 1000
	res.CPUUtil = (cpu1 - cpu0) / elapsed.Seconds()
	res.LoadUtil = (self1 - self0) / elapsed.Seconds()

	time.Sleep(settle) // the server sees the connections close
	res.RSSNoGCkB, _ = memory(pid)
	after, err := readServerMem(addr, timeout)
	if err != nil {
		return fail(err)
	}
	res.RSSkB, res.HWMkB = memory(pid)
	res.HeapAfter, res.GoroutinesPost = after.HeapAlloc+after.StackInuse, after.Goroutines
	res.RSSPerSession = float64(res.RSSkB-res.RSSBeforekB) * 1024 / float64(n)
	res.NoGCPerSession = float64(res.RSSNoGCkB-res.RSSBeforekB) * 1024 / float64(n)
	res.HeapPerSession = float64(res.HeapAfter-res.HeapBefore) / float64(n)
	res.GoroutinesPerSn = float64(res.GoroutinesPost-res.GoroutinesPre) / float64(n)

	// Every session must still be there: one call each, every answer checked.
	if err := workload.CallSessions(addr, w.Path, sids, conns, timeout); err != nil {
		return fail(fmt.Errorf("calling the idle sessions: %w", err))
	}
	return res
}
