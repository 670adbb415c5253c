package soak

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/bench/servers"
)

// inProcess serves the soak endpoint and the memory endpoint, with wrap
// (if set) around the soak handler.
func inProcess(t *testing.T, wrap func(http.Handler) http.Handler) Config {
	t.Helper()
	h := servers.MCPKitSoak()
	mux := http.NewServeMux()
	var soakH http.Handler = h
	if wrap != nil {
		soakH = wrap(h)
	}
	mux.Handle(servers.PathSoak, soakH)
	mux.HandleFunc("GET "+servers.MemPath, servers.ServeMem)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		h.Close()
	})
	return Config{
		URL:          srv.URL + servers.PathSoak,
		MemURL:       srv.URL + servers.MemPath,
		Warmup:       300 * time.Millisecond,
		PeakDuration: 500 * time.Millisecond,
		PeakWorkers:  4,
		Duration:     time.Second,
		Workers:      16,
		MaxOps:       120, // per phase: the test stays short however fast the machine
		Settle:       5 * time.Second,
		// In process, the heap is the load generator's as well as the
		// server's.
		HeapSlackBytes: 8 << 20,
	}
}

// TestSoakShort runs the whole soak, peak measurement included, with a
// count-bounded mix against an in-process server: it must pass.
func TestSoakShort(t *testing.T) {
	cfg := inProcess(t, nil)
	rep, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep.Print(&out)
	t.Log("\n" + out.String())
	if !rep.Pass {
		t.Fatal("the soak failed")
	}
	if rep.Peak <= 0 || len(rep.Phases) != 3 {
		t.Fatalf("peak %v, %d phases: want a measured peak and warm-up, peak and soak", rep.Peak, len(rep.Phases))
	}
	for _, want := range []string{"soak      legacy", "soak  disconnect", "PASS  goroutines back to baseline", "soak: PASS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
}

// TestSoakFindsLeak: a server that leaks one goroutine per request fails
// the goroutine check.
func TestSoakFindsLeak(t *testing.T) {
	stop := make(chan struct{})
	var leaked sync.WaitGroup
	t.Cleanup(func() {
		close(stop)
		leaked.Wait()
	})
	cfg := inProcess(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			leaked.Go(func() { <-stop })
			h.ServeHTTP(w, r)
		})
	})
	cfg.Rate, cfg.MaxOps, cfg.Settle = 200, 40, time.Second
	cfg.Mix = Mix{Modern: 1}
	rep, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass || rep.Unexpected != 0 {
		t.Fatalf("pass %v with %d unexpected errors: want a failure of the goroutine check only", rep.Pass, rep.Unexpected)
	}
	for _, c := range rep.Checks {
		if c.OK == (c.Name == "goroutines back to baseline") {
			t.Errorf("check %q: ok %v (%s)", c.Name, c.OK, c.Detail)
		}
	}
}

// TestSoakFindsWrongAnswer: a server whose echo answers carry another
// text gives unexpected errors.
func TestSoakFindsWrongAnswer(t *testing.T) {
	cfg := inProcess(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(&rewriter{ResponseWriter: w}, r)
		})
	})
	cfg.Rate, cfg.MaxOps, cfg.Warmup = 200, 20, 100*time.Millisecond
	cfg.Mix = Mix{Modern: 1}
	rep, err := Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass || rep.Unexpected == 0 || len(rep.FirstErrors) == 0 || !strings.Contains(rep.FirstErrors[0], "want the text") {
		t.Fatalf("pass %v, %d unexpected, first %q: want failures for the wrong text", rep.Pass, rep.Unexpected, rep.FirstErrors)
	}
}

// rewriter changes "soak-" to "soak+" in every body it writes.
type rewriter struct{ http.ResponseWriter }

func (w *rewriter) Write(p []byte) (int, error) {
	return w.ResponseWriter.Write(bytes.ReplaceAll(p, []byte("soak-"), []byte("soak+")))
}

func TestParseMix(t *testing.T) {
	m, err := ParseMix(DefaultMix.String())
	if err != nil || m != DefaultMix {
		t.Fatalf("round trip: %v, %v", m, err)
	}
	m, err = ParseMix("sse=2, mrtr=1")
	if err != nil || m != (Mix{SSE: 2, MRTR: 1}) {
		t.Fatalf("%v, %v", m, err)
	}
	for _, bad := range []string{"", "sse", "sse=-1", "nope=1", "sse=0"} {
		if _, err := ParseMix(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestHist(t *testing.T) {
	var h hist
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.99, 990 * time.Millisecond}} {
		got := h.quantile(c.q)
		if got > c.want || float64(got) < 0.93*float64(c.want) {
			t.Errorf("quantile %v = %v, want about %v (within the bucket's 6%%, below)", c.q, got, c.want)
		}
	}
	if h.max != time.Second || h.quantile(1) != h.max {
		t.Errorf("max %v, quantile(1) %v", h.max, h.quantile(1))
	}
	for i := range 63 * 16 { // a Duration is under 2⁶³ ns
		if i >= 16 && i < 64 {
			continue // unused: values under 16 ns have buckets 0–15
		}
		if b := bucket(lower(i)); b != i {
			t.Fatalf("bucket(lower(%d)) = %d", i, b)
		}
	}
}
