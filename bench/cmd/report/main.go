// Command report reads the JSON lines written by run.sh (one load result
// each, plus the run's repetition) and prints the medians per server and
// workload, with throughput ratios to go-sdk, mcp-go and the raw ceiling.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"slices"
)

type row struct {
	Server   string  `json:"server"`
	Workload string  `json:"workload"`
	Mode     string  `json:"mode"`
	Rate     float64 `json:"rate"`
	Load     string  `json:"load"` // open loop: the fraction of peak, e.g. "50%"
	Requests int     `json:"requests"`
	Errors   int64   `json:"errors"`
	Late     int64   `json:"late"`
	RPS      float64 `json:"rps"`
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
	P999     float64 `json:"p999_ms"`
	CPU      float64 `json:"cpu_s_per_1k"`
	Util     float64 `json:"cpu_util"`
	LoadUtil float64 `json:"load_cpu_util"`
	RSS      int64   `json:"rss_kb"`
	HWM      int64   `json:"hwm_kb"`
	Rep      int     `json:"rep"`

	// W9 (mode "sessions")
	Sessions      int     `json:"sessions"`
	RSSBefore     int64   `json:"rss_before_kb"`
	RSSNoGC       int64   `json:"rss_nogc_kb"`
	RSSPerSession float64 `json:"rss_b_per_session"`
	NoGCPerSess   float64 `json:"rss_nogc_b_per_session"`
	HeapPerSess   float64 `json:"heap_b_per_session"`
	GPerSess      float64 `json:"goroutines_per_session"`
}

var order = []string{"mcpkit", "mcpkit-noop", "mcpkit-otel", "gosdk", "mcpgo", "raw"}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

type agg struct {
	rps, p50, p99, p999, cpu, util, rss, lutil []float64
	errors, late                               int64
	rate                                       float64
	cpuByRep                                   map[int][]float64
}

func (a *agg) add(r row) {
	a.rps = append(a.rps, r.RPS)
	a.p50 = append(a.p50, r.P50)
	a.p99 = append(a.p99, r.P99)
	a.p999 = append(a.p999, r.P999)
	a.cpu = append(a.cpu, r.CPU)
	a.util = append(a.util, r.Util)
	a.rss = append(a.rss, float64(r.RSS))
	a.lutil = append(a.lutil, r.LoadUtil)
	a.errors += r.Errors
	a.late += r.Late
	a.rate = r.Rate
	if a.cpuByRep == nil {
		a.cpuByRep = map[int][]float64{}
	}
	a.cpuByRep[r.Rep] = append(a.cpuByRep[r.Rep], r.CPU)
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func main() {
	peak := flag.Bool("peak", false, "print only 'server workload median-rps' lines (for run.sh)")
	procs := flag.Bool("procs", false, "print every run with the CPU of each process it measured (cluster.sh, gateway.sh)")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: report [-peak|-procs] results.jsonl")
	}
	if *procs {
		printProcs(flag.Arg(0))
		return
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	closed := map[[2]string]*agg{}
	open := map[[3]string]*agg{}
	idle := map[string][]row{}
	var workloads, loads []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Server == "" {
			continue
		}
		if r.Mode == "sessions" {
			idle[r.Server] = append(idle[r.Server], r)
			continue
		}
		if r.Mode == "open" {
			k := [3]string{r.Workload, r.Load, r.Server}
			if open[k] == nil {
				open[k] = &agg{}
				if !slices.Contains(loads, r.Load) {
					loads = append(loads, r.Load)
				}
			}
			open[k].add(r)
			continue
		}
		k := [2]string{r.Workload, r.Server}
		if closed[k] == nil {
			closed[k] = &agg{}
			if !slices.Contains(workloads, r.Workload) {
				workloads = append(workloads, r.Workload)
			}
		}
		closed[k].add(r)
	}
	slices.Sort(workloads)
	if *peak {
		for k, a := range closed {
			fmt.Printf("%s %s %.0f\n", k[1], k[0], median(a.rps))
		}
		return
	}
	fmt.Println("Closed loop (peak throughput), medians over repetitions")
	fmt.Println()
	fmt.Println("| workload | server | req/s (min–max) | vs go-sdk | vs mcp-go | vs raw | p50 ms | p99 ms | CPU-s/1k req | server CPU use | load-gen CPU use | RSS MB | errors |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, w := range workloads {
		med := map[string]float64{}
		for _, s := range order {
			if a := closed[[2]string{w, s}]; a != nil {
				med[s] = median(a.rps)
			}
		}
		for _, s := range order {
			a := closed[[2]string{w, s}]
			if a == nil {
				continue
			}
			fmt.Printf("| %s | %s | %.0f (%.0f–%.0f) | %s | %s | %s | %.3f | %.2f | %.4f | %.0f%% | %.0f%% | %.1f | %d |\n",
				w, s, med[s], slices.Min(a.rps), slices.Max(a.rps),
				ratio(med[s], med["gosdk"]), ratio(med[s], med["mcpgo"]), ratio(med[s], med["raw"]),
				median(a.p50), median(a.p99), median(a.cpu), 100*median(a.util), 100*median(a.lutil), median(a.rss)/1024, a.errors)
		}
	}
	fmt.Println()
	fmt.Println("CPU-s/1k req is the server's own CPU time per 1,000 requests: the least noisy figure on a shared machine.")
	fmt.Println("Its inverse ratio to a peer is the per-core throughput ratio. Server CPU use well under 100%, or")
	fmt.Println("load-gen CPU use near 100%, means the server was not the bottleneck (contention or the generator).")
	printCeiling(closed, workloads)
	printIdle(idle)
	if len(open) == 0 {
		return
	}
	fmt.Println()
	fmt.Println("Open loop (fixed rate, a fraction of each server's own closed-loop peak), medians")
	fmt.Println()
	fmt.Println("| workload | load | server | rate req/s | p50 ms | p99 ms | p99.9 ms | p99 vs go-sdk | p99 vs mcp-go | CPU-s/1k req | errors | late |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, w := range workloads {
		for _, l := range loads {
			p99 := map[string]float64{}
			for _, s := range order {
				if a := open[[3]string{w, l, s}]; a != nil {
					p99[s] = median(a.p99)
				}
			}
			for _, s := range order {
				a := open[[3]string{w, l, s}]
				if a == nil {
					continue
				}
				fmt.Printf("| %s | %s | %s | %.0f | %.3f | %.3f | %.3f | %s | %s | %.4f | %d | %d |\n",
					w, l, s, a.rate, median(a.p50), p99[s], median(a.p999),
					ratio(p99[s], p99["gosdk"]), ratio(p99[s], p99["mcpgo"]), median(a.cpu), a.errors, a.late)
			}
		}
	}
	fmt.Println()
	fmt.Println("p99 ratios below 1× mean lower latency than the peer.")
}

// printIdle prints the W9 table: per server, the medians over
// repetitions of the memory each idle session holds.
func printIdle(idle map[string][]row) {
	if len(idle) == 0 {
		return
	}
	per := map[string]float64{}
	for s, rs := range idle {
		var xs []float64
		for _, r := range rs {
			if r.Errors == 0 {
				xs = append(xs, r.RSSPerSession)
			}
		}
		per[s] = median(xs)
	}
	fmt.Println()
	fmt.Println("W9: idle legacy sessions over loopback, medians over repetitions (runs with errors left out)")
	fmt.Println()
	fmt.Println("| server | sessions | RSS B/session (min–max) | vs go-sdk | vs mcp-go | RSS B/session before GC | heap+stacks B/session | goroutines/session | VmRSS MB before → after GC (no GC) | VmHWM MB | opened/s | CPU-s/1k opened | runs | errors |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range order {
		rs := idle[s]
		if len(rs) == 0 {
			continue
		}
		var rss, nogc, heap, g, before, after, afterNoGC, hwm, rate, cpu []float64
		var errs int64
		n := 0
		for _, r := range rs {
			errs += r.Errors
			if r.Errors != 0 {
				continue
			}
			n = r.Sessions
			rss = append(rss, r.RSSPerSession)
			nogc = append(nogc, r.NoGCPerSess)
			heap = append(heap, r.HeapPerSess)
			g = append(g, r.GPerSess)
			before = append(before, float64(r.RSSBefore)/1024)
			after = append(after, float64(r.RSS)/1024)
			afterNoGC = append(afterNoGC, float64(r.RSSNoGC)/1024)
			hwm = append(hwm, float64(r.HWM)/1024)
			rate = append(rate, r.RPS)
			cpu = append(cpu, r.CPU)
		}
		if len(rss) == 0 {
			fmt.Printf("| %s | – | – | – | – | – | – | – | – | – | – | – | 0 | %d |\n", s, errs)
			continue
		}
		fmt.Printf("| %s | %d | %.0f (%.0f–%.0f) | %s | %s | %.0f | %.0f | %.2f | %.1f → %.1f (%.1f) | %.1f | %.0f | %.3f | %d | %d |\n",
			s, n, per[s], slices.Min(rss), slices.Max(rss), ratio(per[s], per["gosdk"]), ratio(per[s], per["mcpgo"]),
			median(nogc), median(heap), median(g), median(before), median(after), median(afterNoGC), median(hwm),
			median(rate), median(cpu), len(rss), errs)
	}
	fmt.Println()
	fmt.Println("RSS B/session is (VmRSS after − VmRSS before) / sessions, both read right after the server's own GC and")
	fmt.Println("debug.FreeOSMemory; \"before GC\" is VmRSS as the sessions were left, 1 s after the connections closed.")
	fmt.Println("Ratios below 1× mean less memory than the peer.")
}

// ceilingOf is the raw workload a workload is held against: its own, or
// for W3 (sessions, which the raw handler does not keep) the same call
// session-less, W2.
func ceilingOf(w string) string {
	if w == "W3" {
		return "W2"
	}
	return w
}

// printCeiling holds mcpkit's CPU per request against the raw ceiling's
// per workload, two ways: the ratio of the medians, and the median of
// the ratios within each repetition. The second pairs runs made close
// together, so a slow stretch of a shared machine weighs on both sides
// of a ratio instead of on one median. Rows of one repetition (a run
// appended to another's file) count by their median.
func printCeiling(closed map[[2]string]*agg, workloads []string) {
	var lines []string
	for _, w := range workloads {
		a, raw := closed[[2]string{w, "mcpkit"}], closed[[2]string{ceilingOf(w), "raw"}]
		if a == nil || raw == nil || median(a.cpu) == 0 {
			continue
		}
		var byRep []float64
		reps := ""
		for _, rep := range slices.Sorted(maps.Keys(a.cpuByRep)) {
			c, rc := median(a.cpuByRep[rep]), median(raw.cpuByRep[rep])
			if c == 0 || rc == 0 {
				continue
			}
			byRep = append(byRep, rc/c)
			if reps != "" {
				reps += ", "
			}
			reps += fmt.Sprintf("%.0f%%", 100*rc/c)
		}
		paired := "–"
		if len(byRep) > 0 {
			paired = fmt.Sprintf("%.0f%% (%s)", 100*median(byRep), reps)
		}
		against := ceilingOf(w)
		if against != w {
			against = "raw " + against
		} else {
			against = "raw"
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %.1f | %.1f | %.0f%% | %s |",
			w, against, 1000*median(a.cpu), 1000*median(raw.cpu), 100*median(raw.cpu)/median(a.cpu), paired))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Println()
	fmt.Println("mcpkit against the raw ceiling by CPU (the ceiling's CPU per request ÷ mcpkit's; 100% is the ceiling)")
	fmt.Println()
	fmt.Println("| workload | against | mcpkit CPU µs/req | ceiling CPU µs/req | ratio of medians | median of the ratios by repetition (each) |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, l := range lines {
		fmt.Println(l)
	}
}
