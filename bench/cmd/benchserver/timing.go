package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// TimingPath answers (and resets) the figures -timing collects: GET it
// for a JSON object of microsecond percentiles.
const TimingPath = "/debug/bench-timing"

// timing measures where a relayed request's time goes, in the process
// that relays it (the gateway or the relay): the whole request as its
// handler sees it, the upstream round trips made for it (by the
// transport, so the upstream's own time plus the network and the
// scheduling of the upstream process), and the difference, the time the
// relaying process spent on the request itself, waiting for its own core
// included. When the added p99 is in "own", the relaying process is
// slow; when it is in "upstream", the wait is for the other process.
// Every upstream round trip is also timed on its own ("trips"): the
// gateway's client makes its requests on its connection's context, not
// the call's, so there only the trips' distribution is known, not each
// request's share ("upstream" and "own" are then empty).
type timing struct {
	mu             sync.Mutex
	total, up, own []time.Duration
	trips          []time.Duration
	maxSamples     int
	dropped        int
}

type timingKey struct{}

// reqTiming is one request's upstream time, added to by the transport.
type reqTiming struct {
	mu     sync.Mutex
	up     time.Duration
	linked bool // a round trip carried the request's context
}

func newTiming() *timing { return &timing{maxSamples: 1 << 20} }

// handler wraps h: it times every request but TimingPath, which it serves.
func (t *timing) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == TimingPath {
			t.serve(w)
			return
		}
		rt := &reqTiming{}
		start := time.Now()
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), timingKey{}, rt)))
		d := time.Since(start)
		rt.mu.Lock()
		up := rt.up
		rt.mu.Unlock()
		t.mu.Lock()
		if len(t.total) < t.maxSamples {
			t.total = append(t.total, d)
			if rt.linked {
				t.up, t.own = append(t.up, up), append(t.own, d-up)
			}
		} else {
			t.dropped++
		}
		t.mu.Unlock()
	})
}

// transport wraps next: the time to each response's headers and body's
// end is the request's upstream time.
func (t *timing) transport(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		rt, _ := req.Context().Value(timingKey{}).(*reqTiming)
		start := time.Now()
		res, err := next.RoundTrip(req)
		if err != nil {
			t.trip(rt, time.Since(start))
			return res, err
		}
		res.Body = &timedBody{ReadCloser: res.Body, start: start, t: t, rt: rt}
		return res, nil
	})
}

// trip records one upstream round trip, and adds it to rt's when known.
func (t *timing) trip(rt *reqTiming, d time.Duration) {
	if rt != nil {
		rt.mu.Lock()
		rt.up += d
		rt.linked = true
		rt.mu.Unlock()
	}
	t.mu.Lock()
	if len(t.trips) < t.maxSamples {
		t.trips = append(t.trips, d)
	}
	t.mu.Unlock()
}

type timedBody struct {
	io.ReadCloser
	start time.Time
	t     *timing
	rt    *reqTiming
	done  bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		b.t.trip(b.rt, time.Since(b.start))
	}
	return n, err
}

func (b *timedBody) Close() error {
	if !b.done {
		b.done = true
		b.t.trip(b.rt, time.Since(b.start))
	}
	return b.ReadCloser.Close()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// serve answers the percentiles since the last GET and starts again.
func (t *timing) serve(w http.ResponseWriter) {
	t.mu.Lock()
	total, up, own, trips, dropped := t.total, t.up, t.own, t.trips, t.dropped
	t.total, t.up, t.own, t.trips, t.dropped = nil, nil, nil, nil, 0
	t.mu.Unlock()
	out := map[string]any{"requests": len(total), "dropped": dropped,
		"total_us": pcts(total), "upstream_us": pcts(up), "own_us": pcts(own), "trips_us": pcts(trips)}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func pcts(ds []time.Duration) map[string]float64 {
	if len(ds) == 0 {
		return nil
	}
	slices.Sort(ds)
	at := func(q float64) float64 {
		return float64(ds[min(len(ds)-1, int(q*float64(len(ds))))].Microseconds())
	}
	return map[string]float64{"p50": at(0.50), "p90": at(0.90), "p99": at(0.99), "p999": at(0.999), "max": float64(ds[len(ds)-1].Microseconds())}
}
