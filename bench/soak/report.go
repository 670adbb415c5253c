package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"net/http"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mcpkit/mcpkit/bench/servers"
)

// hist is a latency histogram with about 6% resolution: 16 linear
// buckets per power of two of nanoseconds. Fixed size, however long the
// run.
type hist struct {
	b   [64 * 16]int64
	n   int64
	max time.Duration
}

func bucket(d time.Duration) int {
	ns := uint64(max(d, 0))
	if ns < 16 {
		return int(ns)
	}
	e := bits.Len64(ns) - 1 // ≥ 4
	return e*16 + int(ns>>(e-4)&15)
}

// lower is the smallest duration of bucket i.
func lower(i int) time.Duration {
	if i < 16 {
		return time.Duration(i)
	}
	e, m := i/16, i%16
	return time.Duration(uint64(16+m) << (e - 4))
}

func (h *hist) add(d time.Duration) {
	h.b[bucket(d)]++
	h.n++
	h.max = max(h.max, d)
}

func (h *hist) merge(o *hist) {
	for i, v := range o.b {
		h.b[i] += v
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile is the lower bound of the bucket holding quantile q.
func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(q * float64(h.n))
	var seen int64
	for i, v := range h.b {
		seen += v
		if seen > rank {
			return lower(i)
		}
	}
	return h.max
}

type kindStats struct {
	ok, expected, unexpected int64
	hist                     hist
}

// phaseStats is one worker's tally (then a phase's, merged).
type phaseStats struct {
	mu    sync.Mutex // the progress line reads it while the worker writes
	kinds [numKinds]kindStats
}

func (s *phaseStats) add(k Kind, d time.Duration, expected int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ks := &s.kinds[k]
	ks.expected += int64(expected)
	if err != nil {
		ks.unexpected++
		return
	}
	ks.ok++
	ks.hist.add(d)
}

func (s *phaseStats) snapshot() (ops, unexpected int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ks := range s.kinds {
		ops += ks.ok + ks.unexpected
		unexpected += ks.unexpected
	}
	return ops, unexpected
}

// mergeInto adds the tally to kinds.
func (s *phaseStats) mergeInto(kinds *[numKinds]kindStats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range kinds {
		a, b := &kinds[k], &s.kinds[k]
		a.ok, a.expected, a.unexpected = a.ok+b.ok, a.expected+b.expected, a.unexpected+b.unexpected
		a.hist.merge(&b.hist)
	}
}

// Phase is one phase's outcome.
type Phase struct {
	Name    string
	Workers int
	Target  float64 // open loop: operations per second; 0: closed loop
	Elapsed time.Duration
	Late    int64 // open loop: operations not sent (every worker busy, backlog full)
	HTTP    HTTPCounts
	// ServerCPU and LoadCPU are the server's (with Config.ServerPID) and
	// the load generator's CPU time over the phase, in cores.
	ServerCPU, LoadCPU float64
	kinds              [numKinds]kindStats
}

// Ops is the number of operations run (successful or not).
func (p *Phase) Ops() int64 {
	var n int64
	for _, ks := range p.kinds {
		n += ks.ok + ks.unexpected
	}
	return n
}

// Rate is the operations per second achieved.
func (p *Phase) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Ops()) / p.Elapsed.Seconds()
}

// Check is one acceptance criterion.
type Check struct {
	Name   string
	OK     bool
	Detail string
}

// Report is a run's outcome.
type Report struct {
	Config          Config
	Start, End      time.Time
	Peak            float64 // measured, operations per second (0: Config.Rate was given)
	Target          float64 // the soak's rate
	Phases          []Phase
	Unexpected      int64
	FirstErrors     []string
	Before, After   servers.Mem
	BaselineSettled bool
	AfterSettled    bool
	SettleTime      time.Duration
	Interrupted     bool
	Checks          []Check
	Pass            bool
}

func (r *Report) phase(name string) *Phase {
	for i := range r.Phases {
		if r.Phases[i].Name == name {
			return &r.Phases[i]
		}
	}
	return nil
}

// judge applies the acceptance criteria.
func (r *Report) judge() {
	c := &r.Config
	add := func(name string, ok bool, format string, a ...any) {
		r.Checks = append(r.Checks, Check{name, ok, fmt.Sprintf(format, a...)})
	}
	add("no unexpected error", r.Unexpected == 0, "%d unexpected", r.Unexpected)
	soak := r.phase("soak")
	add("soak ran to its end", soak != nil && !r.Interrupted, "interrupted: %v", r.Interrupted || soak == nil)
	if soak != nil {
		var missing []string
		for k, w := range c.Mix {
			if ks := soak.kinds[k]; w > 0 && ks.ok == 0 {
				missing = append(missing, Kind(k).String())
			}
		}
		add("every kind of the mix ran", len(missing) == 0, "without a success: %v", missing)
		var exp int64
		for _, ks := range soak.kinds {
			exp += ks.expected
		}
		wantExp := c.Mix[Cancel] > 0 || c.Mix[Disconnect] > 0
		add("client cancellations and disconnects happened", !wantExp || exp > 0, "%d", exp)
	}
	b, a := r.Before, r.After
	add("goroutines back to baseline", a.Goroutines <= b.Goroutines+c.GoroutineTolerance,
		"%d → %d (tolerance +%d; settled: %v after %v)", b.Goroutines, a.Goroutines, c.GoroutineTolerance, r.AfterSettled, r.SettleTime.Round(time.Millisecond))
	slack := max(c.HeapSlackBytes, uint64(c.HeapSlackFraction*float64(b.HeapInuse)))
	add("heap back to baseline", a.HeapInuse <= b.HeapInuse+slack,
		"HeapInuse %d → %d B (tolerance +%d B)", b.HeapInuse, a.HeapInuse, slack)
	r.Pass = true
	for _, ch := range r.Checks {
		r.Pass = r.Pass && ch.OK
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/1e6) }

// Print writes the summary table.
func (r *Report) Print(w io.Writer) {
	c := &r.Config
	fmt.Fprintf(w, "soak of %s, %s → %s (%v)\n", c.URL, r.Start.UTC().Format("2006-01-02 15:04:05"), r.End.UTC().Format("15:04:05 MST"), r.End.Sub(r.Start).Round(time.Second))
	fmt.Fprintf(w, "mix %s; sse %d notifications; cancel/disconnect at the 1st of %d, %d ms apart; %.0f%% of legacy sessions cancel a call\n",
		c.Mix, c.Steps, c.SlowSteps, c.SlowDelayMs, 100*c.LegacyCancel)
	if r.Peak > 0 {
		fmt.Fprintf(w, "peak (closed loop, %d workers, %v): %.0f ops/s; soak target %.0f%% of it: %.0f ops/s\n", c.PeakWorkers, c.PeakDuration, r.Peak, 100*c.Fraction, r.Target)
	} else {
		fmt.Fprintf(w, "soak target (given): %.0f ops/s\n", r.Target)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tkind\tops\tok\tops/s\tp50 ms\tp99 ms\tmax ms\texpected\tunexpected\t")
	for i := range r.Phases {
		p := &r.Phases[i]
		var all kindStats
		for k := range p.kinds {
			ks := &p.kinds[k]
			all.ok, all.expected, all.unexpected = all.ok+ks.ok, all.expected+ks.expected, all.unexpected+ks.unexpected
			all.hist.merge(&ks.hist)
			if p.Name == "soak" && c.Mix[k] > 0 {
				n := ks.ok + ks.unexpected
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\t%s\t%s\t%s\t%d\t%d\t\n", p.Name, Kind(k), n, ks.ok, float64(n)/p.Elapsed.Seconds(),
					ms(ks.hist.quantile(0.5)), ms(ks.hist.quantile(0.99)), ms(ks.hist.max), ks.expected, ks.unexpected)
			}
		}
		fmt.Fprintf(tw, "%s\tall\t%d\t%d\t%.1f\t%s\t%s\t%s\t%d\t%d\t\n", p.Name, p.Ops(), all.ok, p.Rate(),
			ms(all.hist.quantile(0.5)), ms(all.hist.quantile(0.99)), ms(all.hist.max), all.expected, all.unexpected)
	}
	_ = tw.Flush()
	for i := range r.Phases {
		p := &r.Phases[i]
		mode := "closed loop"
		if p.Target > 0 {
			mode = fmt.Sprintf("open loop at %.0f ops/s, %d not sent (all workers busy)", p.Target, p.Late)
		}
		fmt.Fprintf(w, "%s: %v, %d workers, %s; HTTP requests: %d POST, %d GET, %d DELETE (%.0f/s); CPU: server %s, load generator %.0f%%\n", p.Name, p.Elapsed.Round(time.Millisecond), p.Workers, mode,
			p.HTTP.POST, p.HTTP.GET, p.HTTP.DELETE, float64(p.HTTP.POST+p.HTTP.GET+p.HTTP.DELETE)/p.Elapsed.Seconds(), pct(p.ServerCPU, c.ServerPID != 0), 100*p.LoadCPU)
	}
	fmt.Fprintf(w, "server before: %d goroutines, HeapInuse %.2f MiB, HeapAlloc %.2f MiB, stacks %.2f MiB (settled: %v)\n",
		r.Before.Goroutines, mib(r.Before.HeapInuse), mib(r.Before.HeapAlloc), mib(r.Before.StackInuse), r.BaselineSettled)
	fmt.Fprintf(w, "server after:  %d goroutines, HeapInuse %.2f MiB, HeapAlloc %.2f MiB, stacks %.2f MiB (settled: %v, %v after the load)\n",
		r.After.Goroutines, mib(r.After.HeapInuse), mib(r.After.HeapAlloc), mib(r.After.StackInuse), r.AfterSettled, r.SettleTime.Round(time.Millisecond))
	if len(r.FirstErrors) > 0 {
		fmt.Fprintf(w, "first unexpected errors (of %d):\n", r.Unexpected)
		for _, e := range r.FirstErrors {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	for _, ch := range r.Checks {
		mark := "PASS"
		if !ch.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s  %s: %s\n", mark, ch.Name, ch.Detail)
	}
	if r.Pass {
		fmt.Fprintln(w, "soak: PASS")
	} else {
		fmt.Fprintln(w, "soak: FAIL")
	}
}

func pct(f float64, known bool) string {
	if !known {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// memClient reads the memory endpoint on a fresh connection each time, so
// that no idle connection of ours is counted between two readings.
var memClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}

func readMem(ctx context.Context, url string) (servers.Mem, error) {
	var m servers.Mem
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return m, err
	}
	resp, err := memClient.Do(req)
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return m, fmt.Errorf("status %d", resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&m); err != nil || m.HeapInuse == 0 || m.Goroutines == 0 {
		return m, fmt.Errorf("bad answer (%v)", err)
	}
	return m, nil
}

// settleReads is how many consecutive readings with the same goroutine
// count make the server settled; settleEvery is the pause between two.
const (
	settleReads = 3
	settleEvery = 250 * time.Millisecond
)

// settle reads the memory endpoint until the goroutine count is the same
// settleReads times in a row (and, with base, within the tolerance of
// base), for at most cfg.Settle. It returns the last reading and whether
// it settled.
func (r *runner) settle(ctx context.Context, base *servers.Mem) (servers.Mem, bool, error) {
	deadline := time.Now().Add(r.cfg.Settle)
	var last servers.Mem
	same := 0
	t := time.NewTimer(0)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-t.C:
		case <-ctx.Done():
			return last, false, ctx.Err()
		}
		m, err := readMem(ctx, r.cfg.MemURL)
		if err != nil {
			return last, false, err
		}
		if i > 0 && m.Goroutines == last.Goroutines {
			same++
		} else {
			same = 1
		}
		last = m
		within := base == nil || m.Goroutines <= base.Goroutines+r.cfg.GoroutineTolerance
		if same >= settleReads && within {
			return last, true, nil
		}
		if time.Now().After(deadline) {
			return last, false, nil
		}
		t.Reset(settleEvery)
	}
}
