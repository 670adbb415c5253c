// Package soak runs a long, mixed load against mcpkit's soak server
// (servers.MCPKitSoak, /mcp-soak of benchserver) and checks that the
// server comes back to where it started: every answer verified, no
// unexpected error, and after the load the server's goroutines and heap
// back at their baseline. cmd/soak is its command line.
//
// The run has four phases: a closed-loop warm-up (whatever the server
// builds lazily is built before the baseline is read), the baseline,
// a closed-loop peak measurement of the same mix (skipped when the rate
// is given), and the soak itself, in open loop at a fraction of that
// peak. Latency counts from each operation's due time, so a stalled
// server is not hidden.
package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/bench/workload"
)

// Mix is the weight of each kind of operation.
type Mix [numKinds]int

// DefaultMix: mostly modern calls, with every other kind well represented.
// A legacy operation is a whole session (about ten HTTP exchanges and a
// GET stream), so its weight is lower.
var DefaultMix = Mix{Legacy: 10, Modern: 40, SSE: 15, MRTR: 15, Cancel: 10, Disconnect: 10}

func (m Mix) String() string {
	var parts []string
	for k, w := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", Kind(k), w))
	}
	return strings.Join(parts, ",")
}

// ParseMix reads "legacy=10,modern=40,...": kinds left out weigh 0.
func ParseMix(s string) (Mix, error) {
	var m Mix
	for part := range strings.SplitSeq(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		w, err := strconv.Atoi(val)
		if !ok || err != nil || w < 0 || w > 1000 {
			return m, fmt.Errorf("mix: %q is not kind=weight (0–1000)", part)
		}
		k := -1
		for i, n := range kindNames {
			if n == name {
				k = i
			}
		}
		if k < 0 {
			return m, fmt.Errorf("mix: unknown kind %q (want %v)", name, kindNames)
		}
		m[k] = w
	}
	if m.total() == 0 {
		return m, errors.New("mix: every weight is 0")
	}
	return m, nil
}

func (m Mix) total() int {
	t := 0
	for _, w := range m {
		t += w
	}
	return t
}

func (m Mix) pick(r *rand.Rand) Kind {
	n := r.IntN(m.total())
	for k, w := range m {
		if n < w {
			return Kind(k)
		}
		n -= w
	}
	return Modern
}

// Config is one soak run. Fill URL and MemURL; Defaults fills the rest.
type Config struct {
	URL    string // the soak endpoint, http://127.0.0.1:port/mcp-soak
	MemURL string // the memory endpoint, http://127.0.0.1:port/debug/bench-mem

	Duration     time.Duration // the soak phase
	Rate         float64       // operations per second; 0: Fraction of the measured peak
	Fraction     float64       // of the peak (with Rate 0)
	PeakDuration time.Duration // the closed-loop peak measurement
	PeakWorkers  int           // closed-loop workers (warm-up and peak)
	Workers      int           // open-loop workers (the most operations in flight)
	Warmup       time.Duration // the closed-loop warm-up
	MaxOps       int64         // if > 0, each phase ends after this many operations
	Mix          Mix
	Timeout      time.Duration // bounds each operation
	Seed         uint64

	Steps        int     // progress notifications of an sse operation
	SlowSteps    int     // of the slow tool that cancel and disconnect interrupt
	SlowDelayMs  int     // between two of them
	LegacyCancel float64 // share of legacy sessions that cancel a call mid-stream

	MaxUnexpected      int64         // stop the run after this many unexpected errors
	Settle             time.Duration // bounds the wait for the server to settle
	GoroutineTolerance int           // goroutines allowed above the baseline
	HeapSlackBytes     uint64        // heap allowed above the baseline: this much …
	HeapSlackFraction  float64       // … or this fraction of the baseline, whichever is more

	ServerPID int       // if set, the server's CPU time is read from /proc
	Log       io.Writer // progress lines (nil: none)
}

// Defaults fills the zero fields of c.
func (c *Config) Defaults() {
	def := func(p *time.Duration, d time.Duration) {
		if *p == 0 {
			*p = d
		}
	}
	defInt := func(p *int, d int) {
		if *p == 0 {
			*p = d
		}
	}
	def(&c.Duration, 10*time.Minute)
	def(&c.PeakDuration, 10*time.Second)
	def(&c.Warmup, 2*time.Second)
	def(&c.Timeout, 10*time.Second)
	def(&c.Settle, 30*time.Second)
	if c.Fraction == 0 {
		c.Fraction = 0.8
	}
	defInt(&c.PeakWorkers, 16)
	defInt(&c.Workers, 32)
	defInt(&c.Steps, 10)
	defInt(&c.SlowSteps, 20)
	defInt(&c.SlowDelayMs, 5)
	defInt(&c.GoroutineTolerance, 2)
	if c.Mix.total() == 0 {
		c.Mix = DefaultMix
	}
	if c.LegacyCancel == 0 {
		c.LegacyCancel = 0.5
	}
	if c.MaxUnexpected == 0 {
		c.MaxUnexpected = 100
	}
	if c.HeapSlackBytes == 0 {
		c.HeapSlackBytes = 1 << 20
	}
	if c.HeapSlackFraction == 0 {
		c.HeapSlackFraction = 0.25
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

func (c *Config) check() error {
	switch {
	case !strings.HasPrefix(c.URL, "http://127.0.0.1:") && !strings.HasPrefix(c.URL, "http://[::1]:") && !strings.HasPrefix(c.URL, "http://localhost:"):
		return fmt.Errorf("URL %q: loopback only", c.URL)
	case !strings.HasPrefix(c.MemURL, "http://127.0.0.1:") && !strings.HasPrefix(c.MemURL, "http://[::1]:") && !strings.HasPrefix(c.MemURL, "http://localhost:"):
		return fmt.Errorf("MemURL %q: loopback only", c.MemURL)
	case c.Duration < 0 || c.Duration > 2*time.Hour, c.PeakDuration < 0 || c.PeakDuration > 10*time.Minute,
		c.Warmup < 0 || c.Warmup > time.Minute:
		return errors.New("durations: soak ≤ 2h, peak ≤ 10m, warm-up ≤ 1m")
	case c.Rate < 0 || c.Rate > 1e6, c.Fraction <= 0 || c.Fraction > 1:
		return errors.New("rate ≤ 1e6/s, 0 < fraction ≤ 1")
	case c.PeakWorkers < 1 || c.PeakWorkers > 1024, c.Workers < 1 || c.Workers > 4096:
		return errors.New("1 ≤ peak workers ≤ 1024, 1 ≤ workers ≤ 4096")
	case c.Steps < 1 || c.SlowSteps < 2 || c.SlowSteps > 100 || c.SlowDelayMs < 1 || c.SlowDelayMs > 100:
		return errors.New("steps ≥ 1, 2 ≤ slow steps ≤ 100, 1 ≤ slow delay ≤ 100 ms")
	case c.Timeout <= 0 || c.Timeout > time.Minute, c.Settle <= 0 || c.Settle > 5*time.Minute:
		return errors.New("0 < timeout ≤ 1m, 0 < settle ≤ 5m")
	}
	return nil
}

// counting counts the HTTP requests sent, by method.
type counting struct {
	rt                  http.RoundTripper
	post, get, del, oth atomic.Int64
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	switch r.Method {
	case http.MethodPost:
		c.post.Add(1)
	case http.MethodGet:
		c.get.Add(1)
	case http.MethodDelete:
		c.del.Add(1)
	default:
		c.oth.Add(1)
	}
	return c.rt.RoundTrip(r)
}

// HTTPCounts are the HTTP requests of a phase, by method.
type HTTPCounts struct{ POST, GET, DELETE int64 }

func (c *counting) snapshot() HTTPCounts {
	return HTTPCounts{c.post.Load(), c.get.Load(), c.del.Load()}
}

// runner holds what the phases share.
type runner struct {
	cfg  *Config
	rt   *http.Transport
	cnt  *counting
	hc   *http.Client
	stop atomic.Bool // too many unexpected errors
	nph  uint64      // phases started: each has its own random streams

	mu         sync.Mutex
	unexpected int64
	firstErrs  []string
}

// maxFirstErrors is how many unexpected error texts are kept.
const maxFirstErrors = 5

func (r *runner) fail(phase string, k Kind, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unexpected++
	if len(r.firstErrs) < maxFirstErrors {
		s := err.Error()
		if len(s) > 400 {
			s = s[:400] + "…"
		}
		r.firstErrs = append(r.firstErrs, fmt.Sprintf("[%s %s] %s", phase, k, s))
	}
	if r.unexpected >= r.cfg.MaxUnexpected {
		r.stop.Store(true)
	}
}

func (r *runner) logf(format string, a ...any) {
	if r.cfg.Log != nil {
		fmt.Fprintf(r.cfg.Log, format+"\n", a...)
	}
}

// Run runs the warm-up, the baseline, the peak measurement (when
// cfg.Rate is 0), the soak and the final memory reading, and returns the
// report. An error means the run could not be made (no server, no memory
// endpoint); a failed acceptance is in the report (Report.Pass).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.Defaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	rt := http.DefaultTransport.(*http.Transport).Clone()
	rt.MaxIdleConns, rt.MaxIdleConnsPerHost = 4096, 4096
	r := &runner{cfg: &cfg, rt: rt, cnt: &counting{rt: rt}}
	r.hc = &http.Client{Transport: r.cnt}
	defer rt.CloseIdleConnections()
	rep := &Report{Config: cfg, Start: time.Now()}

	if _, err := readMem(ctx, cfg.MemURL); err != nil {
		return nil, fmt.Errorf("memory endpoint: %w (is benchserver run with -mem-endpoint?)", err)
	}
	r.logf("warm-up: %v closed loop, %d workers", cfg.Warmup, cfg.PeakWorkers)
	rep.Phases = append(rep.Phases, r.phase(ctx, "warm-up", cfg.PeakWorkers, cfg.Warmup, 0))

	rt.CloseIdleConnections()
	base, settled, err := r.settle(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	rep.Before, rep.BaselineSettled = base, settled
	r.logf("baseline: %d goroutines, heap in use %d B", base.Goroutines, base.HeapInuse)

	rep.Target = cfg.Rate
	if cfg.Rate == 0 && !r.stop.Load() && ctx.Err() == nil {
		r.logf("peak: %v closed loop, %d workers", cfg.PeakDuration, cfg.PeakWorkers)
		p := r.phase(ctx, "peak", cfg.PeakWorkers, cfg.PeakDuration, 0)
		rep.Phases = append(rep.Phases, p)
		rep.Peak = p.Rate()
		rep.Target = cfg.Fraction * rep.Peak
		r.logf("peak: %.0f ops/s; soak at %.0f%%: %.0f ops/s", rep.Peak, 100*cfg.Fraction, rep.Target)
	}
	if rep.Target < 1 {
		rep.Target = 1
	}
	if !r.stop.Load() && ctx.Err() == nil {
		r.logf("soak: %v open loop at %.0f ops/s, up to %d in flight", cfg.Duration, rep.Target, cfg.Workers)
		rep.Phases = append(rep.Phases, r.phase(ctx, "soak", cfg.Workers, cfg.Duration, rep.Target))
	}

	// Every worker has closed its clients (legacy sessions with DELETE);
	// close the idle keep-alive connections so that the server's
	// connection goroutines end too.
	rt.CloseIdleConnections()
	t0 := time.Now()
	after, settled, err := r.settle(context.WithoutCancel(ctx), &base)
	if err != nil {
		return nil, fmt.Errorf("after the load: %w", err)
	}
	rep.After, rep.AfterSettled, rep.SettleTime = after, settled, time.Since(t0)
	rep.End = time.Now()
	r.mu.Lock()
	rep.Unexpected, rep.FirstErrors = r.unexpected, r.firstErrs
	r.mu.Unlock()
	rep.Interrupted = ctx.Err() != nil
	rep.judge()
	return rep, nil
}

// phase runs workers for dur (or cfg.MaxOps operations): in closed loop
// when rate is 0, else in open loop at rate operations per second.
func (r *runner) phase(ctx context.Context, name string, workers int, dur time.Duration, rate float64) Phase {
	cfg := r.cfg
	p := Phase{Name: name, Workers: workers, Target: rate}
	h0 := r.cnt.snapshot()
	srv0, self0 := workload.CPUSeconds(cfg.ServerPID), workload.CPUSeconds(os.Getpid())
	start := time.Now()
	end := start.Add(dur)
	var started atomic.Int64
	more := func() bool {
		return !r.stop.Load() && ctx.Err() == nil && (cfg.MaxOps <= 0 || started.Add(1) <= cfg.MaxOps)
	}
	var wg sync.WaitGroup
	var due chan time.Time
	var late atomic.Int64
	if rate > 0 {
		due = make(chan time.Time, 2*workers)
		interval := time.Duration(float64(time.Second) / rate)
		wg.Go(func() { // the dispatcher: owned by this phase, ends at end
			defer close(due)
			tick := time.NewTimer(0)
			defer tick.Stop()
			for i := int64(0); ; i++ {
				t := start.Add(time.Duration(i) * interval)
				if !t.Before(end) || !more() {
					return
				}
				if d := time.Until(t); d > 0 {
					tick.Reset(d)
					select {
					case <-tick.C:
					case <-ctx.Done():
						return
					}
				}
				select {
				case due <- t:
				default:
					late.Add(1) // every worker busy and the backlog full
				}
			}
		})
	}
	stats := make([]*phaseStats, workers)
	for i := range stats {
		stats[i] = new(phaseStats)
	}
	progressDone := make(chan struct{})
	var progressWG sync.WaitGroup
	if cfg.Log != nil && dur >= 30*time.Second {
		progressWG.Go(func() { r.progress(name, start, stats, progressDone) })
	}
	r.nph++
	for i := range workers {
		st := stats[i]
		wg.Go(func() {
			o := &op{cfg: cfg, hc: r.hc, rng: rand.New(rand.NewPCG(cfg.Seed, r.nph<<32|uint64(i))), id: i}
			var err error
			if o.modern, err = newModernClient(ctx, cfg, r.hc); err != nil {
				r.fail(name, Modern, fmt.Errorf("modern client: %w", err))
				return
			}
			defer o.modern.Close()
			for {
				var t0 time.Time
				if due != nil {
					var ok bool
					if t0, ok = <-due; !ok {
						return
					}
				} else {
					t0 = time.Now()
					if !t0.Before(end) || !more() {
						return
					}
				}
				k := cfg.Mix.pick(o.rng)
				octx, cancel := context.WithTimeout(ctx, cfg.Timeout)
				n, err := o.run(octx, k)
				cancel()
				d := time.Since(t0)
				st.add(k, d, n, err)
				if err != nil && ctx.Err() == nil {
					r.fail(name, k, err)
				}
			}
		})
	}
	wg.Wait()
	close(progressDone)
	progressWG.Wait()
	p.Elapsed = time.Since(start)
	if rate > 0 && p.Elapsed < dur {
		p.Elapsed = dur
	}
	p.Late = late.Load()
	if cfg.ServerPID != 0 {
		p.ServerCPU = (workload.CPUSeconds(cfg.ServerPID) - srv0) / time.Since(start).Seconds()
	}
	p.LoadCPU = (workload.CPUSeconds(os.Getpid()) - self0) / time.Since(start).Seconds()
	for _, st := range stats {
		st.mergeInto(&p.kinds)
	}
	h1 := r.cnt.snapshot()
	p.HTTP = HTTPCounts{h1.POST - h0.POST, h1.GET - h0.GET, h1.DELETE - h0.DELETE}
	return p
}

// progress logs a line every 10 s of a long phase.
func (r *runner) progress(name string, start time.Time, stats []*phaseStats, done <-chan struct{}) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			var ops, bad int64
			for _, st := range stats {
				o, b := st.snapshot()
				ops, bad = ops+o, bad+b
			}
			el := time.Since(start)
			r.logf("%s: %v: %d ops (%.0f/s), %d unexpected errors", name, el.Round(time.Second), ops, float64(ops)/el.Seconds(), bad)
		}
	}
}
