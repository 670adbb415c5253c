package taskrun

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

const (
	// StoreTimeout bounds each TaskStore call made outside a request (a
	// heartbeat, a settle, a watch) and each peer notification.
	StoreTimeout = 5 * time.Second
	// settleRetryMax is the longest pause between two attempts to store a
	// task's terminal state while the store is unreachable.
	settleRetryMax = 2 * time.Second
	// CancelledByClient is the status message of a 2025 task cancelled by
	// tasks/cancel.
	CancelledByClient = "cancelled by the client"
)

var (
	// errCancelled is the cause of a task's context after tasks/cancel.
	errCancelled = errors.New("server: task cancelled")
	// errExpired is the cause of a task's context once its TTL elapsed.
	errExpired = errors.New("server: task expired")
	// errGone is the cause of a task's context when its record is gone
	// from the store (lost with it): there is nothing left to record.
	errGone = errors.New("server: the task's record is gone")
	// errShutdown is the cause of a task's context when the server shuts
	// down (Manager.Shutdown).
	errShutdown = errors.New("server: the server is shutting down")
)

// Host is what a Manager needs from the protocol server that owns it.
//
// Concurrency contract: its methods are called from any goroutine (task
// goroutines, the heartbeat, peer deliveries, requests) and may be
// called concurrently. Announce, HasListener and NotifyListeners are
// never called with a lock of the Manager held; CheckResponses is called
// with one run's lock held, and so does no I/O and never calls the
// Manager. Each must return in bounded time (a notification is bounded
// by the server's notify timeout) and must not call back into the
// Manager's Shutdown.
type Host interface {
	// Announce tells whoever listens that a task's status changed, as
	// its era has it (rec.Modern): notifications/tasks/status on the
	// session that created it (run.Origin; run may be nil), or
	// notifications/tasks on the listen streams that name it.
	Announce(run *Run, rec *store.TaskRecord)
	// HasListener reports whether a listen stream of this process names
	// the task.
	HasListener(id string) bool
	// NotifyListeners sends notifications/tasks to the listen streams
	// that name the task.
	NotifyListeners(rec *store.TaskRecord)
	// CastsStatus reports whether a legacy task's status notification
	// may be sent without the session's connection (seam.SessionPeers,
	// from the peers' broadcast of the settled record): nothing of the
	// server's would see it on its way out (no interceptor, no observer).
	CastsStatus() bool
	// CheckResponses validates tasks/update answers against a round's
	// open requests (key → method) and their elicitation forms,
	// returning the answers that count, or a JSON-RPC error (the same
	// check as an input-required retry's). It is called with the run's
	// lock held: it must do no I/O and not call the Manager.
	CheckResponses(responses mcp.InputResponses, asked map[string]string, forms map[string]jsontext.Value) (mcp.InputResponses, error)
}

// Origin is the legacy session that created a task, where its status
// notifications go (Host.Announce).
type Origin interface {
	// Ready reports whether the session may be sent notifications.
	Ready() bool
	// Notify sends a notification on the session.
	Notify(ctx context.Context, method string, params any) error
}

// Config is what a Manager is made of. Its values are resolved: the
// server applies its own defaults before New.
type Config struct {
	Store     store.TaskStore
	Log       *slog.Logger
	MaxTasks  int           // the cap on running tasks
	Lease     time.Duration // the lease of this server's tasks
	NoteQueue int           // notifications a legacy task holds for its client
	// SettledRecords and SettledBytes bound the terminal records kept to
	// answer reads without the store (settled.go); SettledRecords <= 0
	// keeps none.
	SettledRecords int
	SettledBytes   int
}

// Manager is the task machinery of one server. mu guards the maps and
// flags; no store call or other I/O is made while it is held (a
// record's transitions are the store's compare-and-set,
// TaskStore.Update). Every goroutine it starts (task goroutines, the
// heartbeat, peer deliveries) is counted in wg and ends at Shutdown.
type Manager struct {
	cfg  Config
	host Host

	mu       sync.Mutex
	runs     map[string]*Run
	instance string     // the owner part of this server's task ids
	peers    seam.Peers // the other instances, when a carrier attached them
	closing  bool       // Shutdown began: no new task
	stop     chan struct{}
	wg       sync.WaitGroup
	beating  bool          // the heartbeat goroutine runs
	kick     chan struct{} // wakes the heartbeat when a run or watch ends
	watch    map[string]*watch
	ended    map[string]*Run               // ended legacy tasks whose notifications wait for a tasks/result
	endOrder []string                      // their ids, oldest first (bounded by MaxTasks)
	lent     map[string]*Carrier           // tasks/result requests lent to owners, by tag
	borrowed map[string]context.CancelFunc // carriers lent by other instances, by tag
	clock    tasks.Clock                   // the wall clock, unless a test sets it before serving
	beat     func()                        // tests: called at the end of each heartbeat

	settledMu sync.Mutex // guards settled only; no I/O while held
	settled   settledSet
}

// New returns the Manager of a server.
func New(cfg Config, host Host) *Manager {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Manager{
		cfg: cfg, host: host,
		instance: rand.Text()[:10],
		stop:     make(chan struct{}), kick: make(chan struct{}, 1),
	}
}

// SetClock sets the task clock (tests, before serving).
func (m *Manager) SetClock(c tasks.Clock) { m.clock = c }

// OnBeat sets a function called at the end of each heartbeat (tests,
// before serving).
func (m *Manager) OnBeat(fn func()) { m.beat = fn }

// Now returns the task clock's time.
func (m *Manager) Now() time.Time { return m.clock.Now() }

// Store returns the task store.
func (m *Manager) Store() store.TaskStore { return m.cfg.Store }

// Run is the live part of a task in this process.
type Run struct {
	ID     string
	Origin Origin // legacy: where notifications/tasks/status go; nil otherwise

	ctx        context.Context // the task's own, detached from the request
	cancel     context.CancelCauseFunc
	stopExpire func() bool
	done       chan struct{} // closed once the task is terminal
	// final is the task's terminal record as stored, set before done is
	// closed (read after it); nil when the task ended with none (expired,
	// its record gone, its outcome not stored before shutdown).
	final  *store.TaskRecord
	stored atomic.Bool // the record is in the store: the heartbeat renews it

	mu      sync.Mutex
	answers mcp.InputResponses // every answer received so far
	// carriers are the 2025 tasks/result requests in flight: a legacy
	// task's input requests travel on one of them (SEP-2260: a
	// server→client request belongs to a client request in progress);
	// arrived is closed and replaced when one arrives.
	carriers []*Carrier
	arrived  chan struct{}
	asked    map[string]string         // open input requests: key → method
	forms    map[string]jsontext.Value // their elicitation forms
	resume   chan struct{}             // closed when every open request is answered
	// notes are a legacy task's notifications waiting for a tasks/result
	// request to carry them (notes.go); flushing is set while one
	// goroutine sends them.
	notes    []note
	flushing bool
	flushed  chan struct{} // closed when flushing ends, once asked for (drainNotes)
}

// Carrying reports whether a tasks/result request carries the task
// (test support).
func (run *Run) Carrying() bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	return len(run.carriers) > 0
}

// AwaitingInput reports whether a 2026 task waits for tasks/update
// (test support).
func (run *Run) AwaitingInput() bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.resume != nil
}

// Carrier is a tasks/result request in flight: here, or on another
// instance that lent it. Ask sends an input request on it; Notify sends
// a task's notification on it, and an error means it was not sent (the
// next carrier sends it). Both are set by whoever makes the Carrier.
type Carrier struct {
	Ctx    context.Context
	Ask    func(ctx context.Context, ir mcp.InputRequest, form jsontext.Value) (jsontext.Value, error)
	Notify func(method string, params any) error
}

// addCarrier registers a tasks/result request; the returned func removes it.
func (run *Run) addCarrier(c *Carrier) func() {
	run.mu.Lock()
	run.carriers = append(run.carriers, c)
	if run.arrived != nil {
		close(run.arrived)
		run.arrived = nil
	}
	run.mu.Unlock()
	return func() {
		run.mu.Lock()
		run.carriers = slices.DeleteFunc(run.carriers, func(x *Carrier) bool { return x == c })
		run.mu.Unlock()
	}
}

// waitCarrier returns the newest live tasks/result request, waiting for
// one; nil when ctx ends first.
func (run *Run) waitCarrier(ctx context.Context) *Carrier {
	for {
		run.mu.Lock()
		for i := len(run.carriers) - 1; i >= 0; i-- {
			if c := run.carriers[i]; c.Ctx.Err() == nil {
				run.mu.Unlock()
				return c
			}
		}
		if run.arrived == nil {
			run.arrived = make(chan struct{})
		}
		arrived := run.arrived
		run.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
			return nil
		}
	}
}

// Instance names this server among the instances of its deployment: the
// broker's id once a carrier attached peers, else an id of its own.
func (m *Manager) Instance() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.instance
}

// claim reserves a slot for a new task and registers its run; the error
// refuses the task (the cap, or shutdown).
func (m *Manager) claim(run *Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return jsonrpc.NewError(mcp.CodeInternalError, "Internal error: the server is shutting down and starts no new task")
	}
	if n := m.cfg.MaxTasks; len(m.runs) >= n {
		return jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: too many tasks running (the server's limit is %d); try again later", n)
	}
	if m.runs == nil {
		m.runs = make(map[string]*Run)
	}
	m.runs[run.ID] = run
	m.wg.Add(1) // released by the task's goroutine, or by unclaim
	m.startBeatLocked()
	return nil
}

// unclaim undoes claim for a task that did not start.
func (m *Manager) unclaim(run *Run) {
	m.mu.Lock()
	delete(m.runs, run.ID)
	m.mu.Unlock()
	m.wg.Done()
}

// Shutdown stops the tasks: no new task starts, every running task's
// handler is cancelled, and each is recorded failed unless it settles
// otherwise first. It waits for the Manager's goroutines to end, or for
// ctx.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	if !m.closing {
		m.closing = true
		close(m.stop)
	}
	runs := make([]*Run, 0, len(m.runs))
	for _, run := range m.runs {
		runs = append(runs, run)
	}
	m.mu.Unlock()
	for _, run := range runs {
		run.cancel(errShutdown)
	}
	done := make(chan struct{})
	go func() { // ends when the task goroutines have: bounded by their handlers
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server: shutdown: %d tasks still running: %w", m.Running(), ctx.Err())
	}
}

// Running counts the tasks running in this process.
func (m *Manager) Running() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.runs)
}

// Lookup returns the run of a task running in this process; nil when
// none runs here.
func (m *Manager) Lookup(id string) *Run {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runs[id]
}

// Stop cancels the handler of a task running in this process and
// returns its run; nil when none runs here.
func (m *Manager) Stop(id string) *Run {
	run := m.Lookup(id)
	if run != nil {
		run.cancel(errCancelled)
	}
	return run
}

// Watching reports whether a request here waits on the task (test
// support for ordering: the wait is registered before the test acts).
func (m *Manager) Watching(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.watch[id] != nil
}
