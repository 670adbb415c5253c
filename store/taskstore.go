package store

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/expiry"
	"github.com/mcpkit/mcpkit/mcp"
)

// ErrTaskNotFound is returned by a TaskStore for an id it does not hold
// (never created, deleted, or past its TTL).
var ErrTaskNotFound = errors.New("store: task not found")

// TaskRecord is what a TaskStore keeps of one task: its state, who owns
// it, and how it settled. The running work itself (its goroutine, its
// cancellation, the answers it waits for) stays in the server process
// that started it.
type TaskRecord struct {
	ID string
	// Principal is the authenticated requestor that created the task
	// (empty without authentication); only it may see the task.
	Principal string
	// SessionID is the legacy session that created the task, if any.
	SessionID string
	// Modern is true for tasks created under the 2026 tasks extension.
	Modern        bool
	Status        mcp.TaskStatus
	StatusMessage string
	CreatedAt     time.Time
	LastUpdatedAt time.Time
	// TTL is how long after CreatedAt the task is kept; zero is unlimited.
	TTL          time.Duration
	PollInterval time.Duration
	// InputRequests are the open input requests while input_required.
	InputRequests mcp.InputRequests
	// Result is the encoded result of a completed task.
	Result jsontext.Value
	// Error is the JSON-RPC error of a failed task.
	Error *mcp.TaskError
	// Owner is the server instance that runs the task (the one whose id
	// the task id names); empty when no instance claims it.
	Owner string
	// LeaseUntil is when the owner's claim lapses unless it renews it (a
	// heartbeat): a task still not terminal past it is failed by
	// whichever instance sees it first. Zero: no lease.
	LeaseUntil time.Time
}

// Lapsed reports whether the record's owner let its lease run out at
// now while the task was not terminal.
func (r *TaskRecord) Lapsed(now time.Time) bool {
	return !r.Status.Terminal() && !r.LeaseUntil.IsZero() && now.After(r.LeaseUntil)
}

// Expired reports whether the record is past its TTL at now.
func (r *TaskRecord) Expired(now time.Time) bool {
	return r.TTL > 0 && now.After(r.CreatedAt.Add(r.TTL))
}

// Clone returns a deep copy of the record.
func (r *TaskRecord) Clone() *TaskRecord {
	c := *r
	if r.InputRequests != nil {
		c.InputRequests = make(mcp.InputRequests, len(r.InputRequests))
		for k, v := range r.InputRequests {
			c.InputRequests[k] = v
		}
	}
	c.Result = slices.Clone(r.Result)
	if r.Error != nil {
		e := *r.Error
		c.Error = &e
	}
	return &c
}

// TaskStore keeps task records. Implementations must be safe for
// concurrent use, must not return records past their TTL, and must return
// ErrTaskNotFound for ids they do not hold. Records handed in and out are
// the caller's: a store copies what it keeps.
type TaskStore interface {
	// Put creates or replaces a record.
	Put(ctx context.Context, rec *TaskRecord) error
	// Get returns the record with the id.
	Get(ctx context.Context, id string) (*TaskRecord, error)
	// List returns the live records of a principal, oldest first; for the
	// empty principal, only those of sessionID.
	List(ctx context.Context, principal, sessionID string) ([]*TaskRecord, error)
	// Delete removes a record; deleting an unknown id is not an error.
	Delete(ctx context.Context, id string) error
	// Update changes a record atomically: fn gets a copy of the stored
	// record and changes it, reporting whether to store the change. No
	// other write lands between what fn saw and what is stored (a
	// compare-and-set: an implementation may call fn again, on the newer
	// record, when another write won the race, so fn must only look at
	// its argument). It returns the record as stored afterwards and
	// whether fn's change was stored; ErrTaskNotFound for an id it does
	// not hold. The TTL is unchanged (it counts from CreatedAt).
	Update(ctx context.Context, id string, fn func(rec *TaskRecord) bool) (*TaskRecord, bool, error)
}

// MemoryTaskStore is the default TaskStore: records in memory, dropped
// once past their TTL.
type MemoryTaskStore struct {
	mu   sync.Mutex
	recs map[string]*TaskRecord
	// due holds the expiry of every record with a TTL, soonest first, so
	// that a sweep looks only at the records whose time has come, not at
	// every record (with a 60 s TTL and a thousand tasks a second, a
	// full scan on each Put was most of a task's CPU). An entry whose
	// record was deleted or replaced meanwhile is dropped when it comes
	// due.
	due expiry.Queue
	now func() time.Time
	// examined counts the records sweeps looked at (tests hold it).
	examined int
}

// MemoryTaskStoreOptions configures a MemoryTaskStore. The zero value
// uses the wall clock.
type MemoryTaskStoreOptions struct {
	// Now is the clock TTLs are measured on; nil is time.Now. Tests
	// install a manual clock here (and the same one in the server) so
	// that a TTL elapses when the test says.
	Now func() time.Time
}

// NewMemoryTaskStore returns an empty in-memory store; opts may be nil.
func NewMemoryTaskStore(opts *MemoryTaskStoreOptions) *MemoryTaskStore {
	now := time.Now
	if opts != nil && opts.Now != nil {
		now = opts.Now
	}
	return &MemoryTaskStore{recs: make(map[string]*TaskRecord), now: now}
}

// sweep drops expired records; mu is held. It costs O(log n) per
// record that came due, nothing for the others.
func (m *MemoryTaskStore) sweep() {
	now := m.now()
	for e, ok := m.due.Peek(); ok && now.After(e.At); e, ok = m.due.Peek() {
		m.due.Pop()
		m.examined++
		if r, ok := m.recs[e.Key]; ok && r.Expired(now) {
			delete(m.recs, e.Key)
		}
	}
}

// Put implements TaskStore.
func (m *MemoryTaskStore) Put(_ context.Context, rec *TaskRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep()
	c := rec.Clone()
	m.recs[rec.ID] = c
	if c.TTL > 0 {
		m.due.Push(c.ID, c.CreatedAt.Add(c.TTL))
	}
	return nil
}

// Get implements TaskStore.
func (m *MemoryTaskStore) Get(_ context.Context, id string) (*TaskRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[id]
	if !ok {
		return nil, ErrTaskNotFound
	}
	if r.Expired(m.now()) {
		delete(m.recs, id)
		return nil, ErrTaskNotFound
	}
	return r.Clone(), nil
}

// List implements TaskStore.
func (m *MemoryTaskStore) List(_ context.Context, principal, sessionID string) ([]*TaskRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep()
	var out []*TaskRecord
	for _, r := range m.recs {
		if r.Principal != principal || (principal == "" && r.SessionID != sessionID) {
			continue
		}
		out = append(out, r.Clone())
	}
	slices.SortFunc(out, func(a, b *TaskRecord) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		if a.ID < b.ID {
			return -1
		}
		return 1
	})
	return out, nil
}

// Update implements TaskStore.
func (m *MemoryTaskStore) Update(_ context.Context, id string, fn func(*TaskRecord) bool) (*TaskRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[id]
	if !ok || r.Expired(m.now()) {
		delete(m.recs, id)
		return nil, false, ErrTaskNotFound
	}
	c := r.Clone()
	if !fn(c) {
		return r.Clone(), false, nil
	}
	c.ID = id
	m.recs[id] = c
	return c.Clone(), true, nil
}

// Delete implements TaskStore.
func (m *MemoryTaskStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	delete(m.recs, id)
	m.mu.Unlock()
	return nil
}
