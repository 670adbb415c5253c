package store

import (
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// taskWire is a TaskRecord's JSON form: durations in milliseconds.
type taskWire struct {
	ID            string            `json:"id"`
	Principal     string            `json:"principal,omitzero"`
	SessionID     string            `json:"session,omitzero"`
	Modern        bool              `json:"modern,omitzero"`
	Status        mcp.TaskStatus    `json:"status"`
	StatusMessage string            `json:"statusMessage,omitzero"`
	CreatedAt     time.Time         `json:"createdAt"`
	LastUpdatedAt time.Time         `json:"lastUpdatedAt"`
	TTLMs         int64             `json:"ttlMs,omitzero"`
	PollMs        int64             `json:"pollMs,omitzero"`
	InputRequests mcp.InputRequests `json:"inputRequests,omitzero"`
	Result        jsontext.Value    `json:"result,omitzero"`
	Error         *mcp.TaskError    `json:"error,omitzero"`
	Owner         string            `json:"owner,omitzero"`
	LeaseUntil    time.Time         `json:"leaseUntil,omitzero"`
}

// MarshalTaskRecord returns r's JSON form, the one a shared TaskStore
// keeps and instances pass each other in their broadcasts (durations in
// milliseconds, times in UTC), so that every party reads the others'
// records. Times are written at offset zero whatever their location: the
// same instant reads the same on every instance, and a store that
// compares stored bytes (a compare-and-set) sees the same bytes for it
// from every host, whatever the host's zone.
func MarshalTaskRecord(r *TaskRecord) ([]byte, error) {
	if b, ok := appendTaskRecord(make([]byte, 0, 320+len(r.Result)), r); ok {
		return b, nil
	}
	return json.Marshal(wireOf(r))
}

// wireOf is r in its JSON form's shape, its times in UTC.
func wireOf(r *TaskRecord) *taskWire {
	return &taskWire{
		ID: r.ID, Principal: r.Principal, SessionID: r.SessionID, Modern: r.Modern,
		Status: r.Status, StatusMessage: r.StatusMessage, CreatedAt: r.CreatedAt.UTC(), LastUpdatedAt: r.LastUpdatedAt.UTC(),
		TTLMs: r.TTL.Milliseconds(), PollMs: r.PollInterval.Milliseconds(), InputRequests: r.InputRequests,
		Result: r.Result, Error: r.Error, Owner: r.Owner, LeaseUntil: r.LeaseUntil.UTC(),
	}
}

// UnmarshalTaskRecord reads a record in the form MarshalTaskRecord
// writes.
func UnmarshalTaskRecord(b []byte) (*TaskRecord, error) {
	if r, ok := parseTaskRecord(b); ok {
		return r, nil
	}
	var w taskWire
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, err
	}
	return &TaskRecord{
		ID: w.ID, Principal: w.Principal, SessionID: w.SessionID, Modern: w.Modern,
		Status: w.Status, StatusMessage: w.StatusMessage, CreatedAt: w.CreatedAt, LastUpdatedAt: w.LastUpdatedAt,
		TTL: time.Duration(w.TTLMs) * time.Millisecond, PollInterval: time.Duration(w.PollMs) * time.Millisecond,
		InputRequests: w.InputRequests, Result: w.Result, Error: w.Error, Owner: w.Owner, LeaseUntil: w.LeaseUntil,
	}, nil
}
