package taskrun

import (
	"bytes"
	"context"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonwalk"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// Settled records (docs/design/tasks.md, "Settled records"). A record in
// a terminal state never changes again: every write of the Manager's is
// a compare-and-set that declines a terminal record (Settle, SetStatus,
// the lease's renewal and reaping, tasks/update), on every instance. So
// a terminal record this process stored or read answers later reads of
// the same task as well as the store would, until its TTL: the owner
// serves the tasks/get that finds its task completed, and the
// tasks/result that follows, with no store round trip. The only write
// that would make such a copy stale is a Delete, which the Manager makes
// only of a task that is not terminal (its TTL ran out while it ran).
// The copies are bounded by count and by bytes (Config.SettledRecords,
// Config.SettledBytes), oldest dropped first.

// settledSet is the bounded set of terminal records; its own lock, never
// held during I/O.
type settledSet struct {
	recs  map[string]*store.TaskRecord
	order []string // ids, oldest first; may name ids already dropped
	bytes int      // the result bytes held
}

// recordSize is what a settled record counts against Config.SettledBytes:
// its result and error, and a fixed part for the rest.
func recordSize(r *store.TaskRecord) int {
	n := 256 + len(r.Result) + len(r.StatusMessage)
	if r.Error != nil {
		n += len(r.Error.Message) + len(r.Error.Data)
	}
	return n
}

// keepSettled remembers rec, which the caller has from the store and
// no longer changes, if it is terminal and fits the bounds.
func (m *Manager) keepSettled(rec *store.TaskRecord) {
	if !m.keepable(rec) {
		return
	}
	size := recordSize(rec)
	m.settledMu.Lock()
	defer m.settledMu.Unlock()
	s := &m.settled
	if s.recs == nil {
		s.recs = make(map[string]*store.TaskRecord)
	}
	if _, ok := s.recs[rec.ID]; ok {
		return // the same terminal record: nothing new
	}
	for len(s.order) > 0 && (len(s.recs) >= m.cfg.SettledRecords || s.bytes+size > m.cfg.SettledBytes) {
		id := s.order[0]
		s.order[0] = ""
		s.order = s.order[1:]
		if old, ok := s.recs[id]; ok {
			s.bytes -= recordSize(old)
			delete(s.recs, id)
		}
	}
	if len(s.order) == 0 {
		s.order = nil // let the drained backing array go
	} else if len(s.order) > 2*len(s.recs)+64 { // ids forgotten meanwhile
		s.order = slices.DeleteFunc(s.order, func(id string) bool { _, ok := s.recs[id]; return !ok })
	}
	s.recs[rec.ID] = rec
	s.order = append(s.order, rec.ID)
	s.bytes += size
}

// settledRecord returns a copy of task id's terminal record if this
// process holds one that has not expired.
func (m *Manager) settledRecord(id string) (*store.TaskRecord, bool) {
	m.settledMu.Lock()
	rec, ok := m.settled.recs[id]
	m.settledMu.Unlock()
	if !ok || rec.Expired(m.clock.Now()) {
		return nil, false
	}
	c := *rec // its Result is never written in place; its Error is copied
	if rec.Error != nil {
		e := *rec.Error
		c.Error = &e
	}
	return &c, true
}

// keepable reports whether keepSettled would keep rec: terminal, and
// within the limits.
func (m *Manager) keepable(rec *store.TaskRecord) bool {
	return rec != nil && rec.Status.Terminal() && m.cfg.SettledRecords > 0 && recordSize(rec) <= m.cfg.SettledBytes
}

// Read returns task id's record: a terminal one this process holds
// (settled here, or read before), else the store's, kept when terminal.
// Its errors are the store's.
func (m *Manager) Read(ctx context.Context, id string) (*store.TaskRecord, error) {
	if rec, ok := m.settledRecord(id); ok {
		return rec, nil
	}
	rec, err := m.cfg.Store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if m.keepable(rec) {
		m.keepSettled(rec.Clone())
	}
	return rec, nil
}

// forgetSettled drops task id's settled record (its store record was
// deleted).
func (m *Manager) forgetSettled(id string) {
	m.settledMu.Lock()
	defer m.settledMu.Unlock()
	if old, ok := m.settled.recs[id]; ok {
		m.settled.bytes -= recordSize(old)
		delete(m.settled.recs, id)
	}
}

// peerRecordShare: a terminal record goes with its status broadcast
// (tellPeers) when it counts at most Config.SettledBytes/peerRecordShare
// (64 KiB of the default 8 MiB); a larger one is read from the store by
// whichever instance needs it.
const peerRecordShare = 128

// encodePeerRecord is a terminal record as a status broadcast carries it
// (tasks.PeerMsg.Record): the form the shared stores keep
// (store.MarshalTaskRecord); nil when it cannot be encoded.
func encodePeerRecord(r *store.TaskRecord) jsontext.Value {
	b, err := store.MarshalTaskRecord(r)
	if err != nil {
		return nil
	}
	return b
}

// decodePeerRecord returns the terminal record b carries; nil when there
// is none, or it is not a terminal record.
func decodePeerRecord(b jsontext.Value) *store.TaskRecord {
	if len(b) == 0 {
		return nil
	}
	r, err := store.UnmarshalTaskRecord(b)
	if err != nil {
		return nil
	}
	return terminalRecord(r)
}

// terminalRecord is r when it is a terminal record, else nil.
func terminalRecord(r *store.TaskRecord) *store.TaskRecord {
	if r.ID == "" || !r.Status.Terminal() {
		return nil
	}
	return r
}

// parseStatusCast reads a status broadcast with a record in the form
// appendStatusMsg writes it, the one every instance receives at every
// task's end, with a single pass over the record (json.Unmarshal would
// check and copy it, then store.UnmarshalTaskRecord read it again). msg
// has Op, Task, From and Note; rec is decodePeerRecord's answer for the
// record. ok is false for any other message, which deliverPeer decodes
// with json.Unmarshal; for one it accepts, that reads the same.
func parseStatusCast(raw []byte) (msg tasks.PeerMsg, rec *store.TaskRecord, ok bool) {
	rest, ok := bytes.CutPrefix(raw, []byte(`{"op":"`+tasks.OpStatus+`","task":`))
	if !ok {
		return msg, nil, false
	}
	if msg.Task, rest, ok = cutString(rest); !ok || msg.Task == "" {
		return msg, nil, false
	}
	if r, found := bytes.CutPrefix(rest, []byte(`,"from":`)); found {
		if msg.From, rest, ok = cutString(r); !ok {
			return msg, nil, false
		}
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"record":`)); !ok {
		return msg, nil, false
	}
	if r, found := bytes.CutSuffix(rest, []byte(`,"note":true}`)); found {
		rest, msg.Note = r, true
	} else if rest, ok = bytes.CutSuffix(rest, []byte(`}`)); !ok {
		return msg, nil, false
	}
	// The record must be one JSON value for the message to be one, and no
	// deeper than the decoder allows within the message: read alone, it
	// would be allowed one level more. Its nesting is at most its count of
	// opening brackets (those in strings too), and at most half its length;
	// past castMaxOpen the general path decides.
	if len(rest) > 2*castMaxOpen && bytes.Count(rest, []byte("["))+bytes.Count(rest, []byte("{")) > castMaxOpen {
		return msg, nil, false
	}
	r, err := store.UnmarshalTaskRecord(rest)
	if err != nil {
		return msg, nil, false
	}
	msg.Op = tasks.OpStatus
	return msg, terminalRecord(r), true
}

// castMaxOpen is the most opening brackets a record may hold for
// parseStatusCast to read it: under the decoder's nesting limit (10000)
// less the broadcast's own object, with a margin.
const castMaxOpen = 9900

// cutString reads the JSON string at the start of b (jsonwalk's Text):
// its value and what follows it.
func cutString(b []byte) (string, []byte, bool) {
	w := jsonwalk.Walker{B: b}
	v, ok := w.Text()
	if !ok {
		return "", nil, false
	}
	return string(v), b[w.I:], true
}
