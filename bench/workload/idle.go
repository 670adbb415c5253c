package workload

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// OpenSessions is the first half of W9: it opens n legacy sessions on
// path at addr, spread over conns keep-alive connections (initialize and
// notifications/initialized each, every answer checked), then closes the
// connections, so that the sessions stay idle with no connection. It
// returns the session ids, all distinct, or the first error (it stops at
// the first). Every exchange has the deadline timeout.
func OpenSessions(addr, path string, n, conns int, timeout time.Duration) ([]string, error) {
	sids := make([]string, n)
	err := spread(addr, n, conns, func(c *Conn, i int) error {
		sid, err := c.OpenSession(path, time.Now().Add(timeout))
		sids[i] = sid
		return err
	})
	if err != nil {
		return nil, err
	}
	seen := make(map[string]struct{}, n)
	for _, sid := range sids {
		if _, dup := seen[sid]; dup {
			return nil, fmt.Errorf("session id %q given twice", sid)
		}
		seen[sid] = struct{}{}
	}
	return sids, nil
}

// CallSessions is the check at the end of W9: one tools/call of echo (W3's
// request) on every session in sids, over conns connections, every answer
// checked. It returns the first error.
func CallSessions(addr, path string, sids []string, conns int, timeout time.Duration) error {
	w := All["W3"]
	w.Path = path
	return spread(addr, len(sids), conns, func(c *Conn, i int) error {
		st, body, err := c.Do(w.Request(addr, sids[i]), time.Now().Add(timeout))
		if err == nil {
			err = w.Check(st, body)
		}
		if err != nil {
			return fmt.Errorf("session %d (%s): %w", i, sids[i], err)
		}
		return nil
	})
}

// spread runs do for 0…n-1 over conns workers, each with its own
// keep-alive connection, closed when the worker ends; it stops at the
// first error.
func spread(addr string, n, conns int, do func(c *Conn, i int) error) error {
	if n < 0 || conns < 1 {
		return errors.New("need n ≥ 0 and conns ≥ 1")
	}
	var (
		next     atomic.Int64
		stop     atomic.Bool
		firstErr error
		mu       sync.Mutex
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		stop.Store(true)
	}
	for range min(conns, max(n, 1)) {
		wg.Go(func() {
			c, err := Dial(addr)
			if err != nil {
				fail(err)
				return
			}
			defer c.Close()
			for !stop.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := do(c, i); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}
