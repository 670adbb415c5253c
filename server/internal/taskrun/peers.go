package taskrun

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// Tasks across instances (docs/design/multi-instance.md, "Tasks"). A
// task runs in the process that created it, its owner, whose instance
// id the task id names ("task-<instance>-<random>") and the record's
// Owner holds. The record is in the shared TaskStore, so tasks/get and
// tasks/list are served from the store anywhere; what needs the running
// work goes to the owner over the carrier's peers (seam.Peers):
//
//   - tasks/cancel (tasks.OpCancel): the owner cancels the handler;
//   - tasks/update (tasks.OpUpdate): the owner hands the answers to the task;
//   - a 2025 tasks/result on another instance lends its request to the
//     owner (tasks.OpLend, tasks.OpReturn) so that the task's input requests travel
//     on it (tasks.OpAsk, owner → lender), and waits for the task to end;
//   - every status change is broadcast (tasks.OpStatus): instances wake their
//     waiting tasks/result requests and notify their listen streams.
//
// Broadcasts may be lost; the heartbeat rereads every task a request
// here waits on (checkWatched), so a lost one delays, never loses, an
// outcome.

// errPeerGone is a peer call whose instance (or lent request) is gone.
var errPeerGone = errors.New("server: the instance is gone")

// RemoteOwner returns the instance that runs rec when it is another one
// this server can reach; "" otherwise.
func (m *Manager) RemoteOwner(rec *store.TaskRecord) string {
	owner := rec.Owner
	if owner == "" {
		owner = tasks.OwnerOf(rec.ID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if owner == "" || owner == m.instance || m.peers == nil {
		return ""
	}
	return owner
}

// AttachPeers attaches the other instances (seam.Protocol.AttachPeers):
// it returns what serves their calls and broadcasts, and the detach.
func (m *Manager) AttachPeers(p seam.Peers) (seam.PeerHandler, func()) {
	m.mu.Lock()
	m.peers, m.instance = p, p.ID()
	m.mu.Unlock()
	detach := func() {
		m.mu.Lock()
		if m.peers == p {
			m.peers = nil
		}
		m.mu.Unlock()
	}
	return seam.PeerHandler{Serve: m.servePeer, Deliver: m.deliverPeer}, detach
}

func (m *Manager) peerSet() seam.Peers {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peers
}

// callPeer sends m to instance to and decodes its answer: the result,
// the error it carries as a *jsonrpc.Error, or errPeerGone.
func (m *Manager) callPeer(ctx context.Context, to string, msg *tasks.PeerMsg) (jsontext.Value, error) {
	p := m.peerSet()
	if p == nil {
		return nil, errPeerGone
	}
	msg.From = p.ID()
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	raw, ok, err := p.Call(ctx, to, b)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errPeerGone
	}
	var r tasks.PeerReply
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	if r.Gone {
		return nil, errPeerGone
	}
	if r.Error != nil {
		e := jsonrpc.NewError(r.Error.Code, r.Error.Message)
		if r.Error.Data != nil {
			e = e.WithData(r.Error.Data)
		}
		return nil, e
	}
	return r.Result, nil
}

// tellPeers broadcasts that a task's record changed: rec, as stored.
// A terminal record goes with it when small (peerRecord), so that the
// other instances keep it (settled.go) instead of reading the store.
func (m *Manager) tellPeers(rec *store.TaskRecord) {
	m.tellPeersNoting(rec, false)
}

// tellPeersNoting is tellPeers that, when note holds and the broadcast
// can carry it (statusMsg), has every instance send the legacy status
// notification of rec (PeerMsg.Note). It reports whether the broadcast
// left with the note.
func (m *Manager) tellPeersNoting(rec *store.TaskRecord, note bool) bool {
	p := m.peerSet()
	if p == nil {
		return false
	}
	b, noted, err := m.statusMsg(p, rec, note)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	if err := p.Broadcast(ctx, b); err != nil {
		m.cfg.Log.Debug("server: task status not broadcast", "task", rec.ID, "err", err)
		return false
	}
	return noted
}

// statusMsg is the broadcast (tasks.OpStatus) of rec's change. With
// note, a legacy terminal record it carries also asks every instance to
// send its status notification (PeerMsg.Note; noted reports it): only
// where the carrier can push it (seam.SessionPeers).
func (m *Manager) statusMsg(p seam.Peers, rec *store.TaskRecord, note bool) (b []byte, noted bool, err error) {
	msg := tasks.PeerMsg{Op: tasks.OpStatus, Task: rec.ID, From: p.ID()}
	if rec.Status.Terminal() && m.cfg.SettledRecords > 0 && recordSize(rec) <= m.cfg.SettledBytes/peerRecordShare {
		msg.Record = encodePeerRecord(rec)
	}
	if _, ok := p.(seam.SessionPeers); ok && note && msg.Record != nil && hasSessionStatus(rec) {
		msg.Note, noted = true, true
	}
	if msg.Record == nil {
		b, err = json.Marshal(&msg)
		return b, noted, err
	}
	b, err = appendStatusMsg(make([]byte, 0, len(msg.Record)+len(msg.Task)+len(msg.From)+64), &msg)
	return b, noted, err
}

// appendStatusMsg appends msg, an OpStatus with a Record, as json.Marshal
// would write it, the record spliced as it is: it is
// store.MarshalTaskRecord's output (valid JSON, no need to check and
// copy it again as json.Marshal does; a settled record is the bulk of
// the message).
func appendStatusMsg(b []byte, msg *tasks.PeerMsg) ([]byte, error) {
	var err error
	b = append(b, `{"op":`...)
	if b, err = jsontext.AppendQuote(b, msg.Op); err != nil {
		return nil, err
	}
	b = append(b, `,"task":`...)
	if b, err = jsontext.AppendQuote(b, msg.Task); err != nil {
		return nil, err
	}
	if msg.From != "" {
		b = append(b, `,"from":`...)
		if b, err = jsontext.AppendQuote(b, msg.From); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"record":`...)
	b = append(b, msg.Record...)
	if msg.Note {
		b = append(b, `,"note":true`...)
	}
	return append(b, '}'), nil
}

// castStore is a TaskStore that can publish a broadcast of the peers'
// in the round trip of a write (the Redis TaskStore's UpdateCast).
type castStore interface {
	CanCast(target any) bool
	UpdateCast(ctx context.Context, id string, fn func(*store.TaskRecord) bool, target any, cast func(*store.TaskRecord) ([]byte, error)) (*store.TaskRecord, bool, error)
}

// updateTelling is Store.Update that, when it writes, tells the peers
// (tellPeers) of the record written: in the write's own round trip when
// the store and the peers' carrier allow it (castStore, seam.CastPeers),
// else by a broadcast after it. Either way the broadcast leaves only
// when the write succeeded. note is statusMsg's: noted reports that the
// peers were sent the record written with its status notification,
// which then is for this instance to push too (pushStatus), not to
// forward (Host.Announce).
func (m *Manager) updateTelling(ctx context.Context, id string, note bool, fn func(*store.TaskRecord) bool) (cur *store.TaskRecord, changed, noted bool, err error) {
	if p, ok := m.peerSet().(seam.CastPeers); ok {
		if cs, ok := m.cfg.Store.(castStore); ok {
			if target := p.CastTarget(); target != nil && cs.CanCast(target) {
				cur, changed, err = cs.UpdateCast(ctx, id, fn, target, func(rec *store.TaskRecord) ([]byte, error) {
					b, n, err := m.statusMsg(p, rec, note)
					if err != nil {
						return nil, err
					}
					noted = n
					return p.Frame(b)
				})
				return cur, changed, noted && changed && err == nil, err
			}
		}
	}
	cur, changed, err = m.cfg.Store.Update(ctx, id, fn)
	if err == nil && changed {
		noted = m.tellPeersNoting(cur, note)
	}
	return cur, changed, noted, err
}

// hasSessionStatus reports whether rec's changes are told to a session
// by notifications/tasks/status: a 2025-11-25 task created on one.
func hasSessionStatus(rec *store.TaskRecord) bool { return !rec.Modern && rec.SessionID != "" }

// tellSession sends the status notification of rec, which changed: the
// peers' broadcast carried it (noted), so this instance pushes it where
// it holds the stream, as each peer does; else the host announces it.
func (m *Manager) tellSession(run *Run, rec *store.TaskRecord, noted bool) {
	if noted {
		m.pushStatus(rec)
		return
	}
	m.host.Announce(run, rec)
}

// pushStatus sends a legacy task's notifications/tasks/status on its
// session's standalone stream if this instance holds it (a broadcast
// with PeerMsg.Note, or the owner's own copy of it). It does not wait.
func (m *Manager) pushStatus(rec *store.TaskRecord) {
	p, ok := m.peerSet().(seam.SessionPeers)
	if !ok || !hasSessionStatus(rec) {
		return
	}
	p.PushSession(rec.SessionID, mcp.NotificationTasksStatus, (*statusParams)(rec))
}

// statusParams is a record as the params of its status notification,
// built only on the instance that holds the stream (seam.NotifyParams).
type statusParams store.TaskRecord

func (r *statusParams) NotifyParams() any {
	t := tasks.CoreTask((*store.TaskRecord)(r))
	return &t
}

// deliverPeer takes a broadcast. It runs on the carrier's delivery
// goroutine: it wakes local waiters at once and leaves anything that
// reads the store to a goroutine of the server's.
func (m *Manager) deliverPeer(raw []byte) {
	msg, rec, ok := parseStatusCast(raw)
	if !ok {
		if json.Unmarshal(raw, &msg) != nil || msg.Op != tasks.OpStatus || msg.Task == "" {
			return
		}
		rec = decodePeerRecord(msg.Record)
	}
	if rec != nil && rec.ID == msg.Task {
		m.keepSettled(rec) // terminal: final wherever it is read
	}
	m.wakeWatchers(msg.Task)
	if rec != nil && rec.ID == msg.Task && msg.Note {
		// After the wake (a stream's push may write to the EventStore
		// first); on this goroutine, in order with kindNotify's.
		m.pushStatus(rec)
	}
	if !m.host.HasListener(msg.Task) && m.Lookup(msg.Task) == nil {
		return
	}
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return
	}
	m.wg.Add(1)
	m.mu.Unlock()
	go func() { // owned by the Manager: Shutdown waits for it; bounded by StoreTimeout
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
		defer cancel()
		rec, err := m.Read(ctx, msg.Task)
		if err != nil {
			return
		}
		if run := m.Lookup(rec.ID); run != nil && rec.Status.Terminal() {
			run.cancel(errCancelled) // settled elsewhere
		}
		if rec.Modern && m.freshTask(rec) {
			m.host.NotifyListeners(rec)
		}
	}()
}

// servePeer answers another instance's call about a task of this one,
// or about a request lent here.
func (m *Manager) servePeer(ctx context.Context, raw []byte) []byte {
	var msg tasks.PeerMsg
	var r tasks.PeerReply
	if err := json.Unmarshal(raw, &msg); err != nil {
		r.Error = &mcp.TaskError{Code: mcp.CodeInvalidRequest, Message: "Invalid request: " + err.Error()}
	} else {
		r = m.servePeerMsg(ctx, &msg)
	}
	b, err := json.Marshal(&r)
	if err != nil {
		b, _ = json.Marshal(&tasks.PeerReply{Error: &mcp.TaskError{Code: mcp.CodeInternalError, Message: "Internal error: encoding the answer"}})
	}
	return b
}

func (m *Manager) servePeerMsg(ctx context.Context, msg *tasks.PeerMsg) tasks.PeerReply {
	reply := func(v any, err error) tasks.PeerReply {
		if err != nil {
			e := seam.ToRPCError(err)
			return tasks.PeerReply{Error: &mcp.TaskError{Code: e.Code, Message: e.Message, Data: e.Data}}
		}
		b, err := json.Marshal(v)
		if err != nil {
			return tasks.PeerReply{Error: &mcp.TaskError{Code: mcp.CodeInternalError, Message: "Internal error: " + err.Error()}}
		}
		return tasks.PeerReply{Result: b}
	}
	switch msg.Op {
	case tasks.OpCancel:
		return reply(m.cancelHere(ctx, msg.Task))
	case tasks.OpUpdate:
		rec, err := m.cfg.Store.Get(ctx, msg.Task)
		if err != nil {
			return tasks.PeerReply{Gone: true}
		}
		if err := m.updateHere(ctx, rec, msg.Responses); err != nil {
			return reply(nil, err)
		}
		return reply(&mcp.EmptyResult{}, nil) // as tasks/update answers
	case tasks.OpLend:
		run := m.Lookup(msg.Task)
		if run == nil {
			return tasks.PeerReply{Gone: true}
		}
		m.borrow(run, msg.From, msg.Tag)
		return reply(true, nil)
	case tasks.OpReturn:
		m.mu.Lock()
		cancel := m.borrowed[msg.Tag]
		m.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return reply(true, nil)
	case tasks.OpAsk:
		m.mu.Lock()
		c := m.lent[msg.Tag]
		m.mu.Unlock()
		if c == nil || msg.Request == nil {
			return tasks.PeerReply{Gone: true}
		}
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(c.Ctx, cancel)
		defer stop()
		return reply(c.Ask(actx, *msg.Request, msg.Form))
	case tasks.OpNotify:
		m.mu.Lock()
		c := m.lent[msg.Tag]
		m.mu.Unlock()
		if c == nil || msg.Method == "" || c.Ctx.Err() != nil {
			return tasks.PeerReply{Gone: true}
		}
		return reply(true, c.Notify(msg.Method, msg.Params))
	}
	return tasks.PeerReply{Error: &mcp.TaskError{Code: mcp.CodeMethodNotFound, Message: "Method not found: " + msg.Op}}
}

// borrow registers, on the owner, a tasks/result request of another
// instance as a carrier of the task's input requests. It lasts until
// the lender returns it, or an ask finds it gone.
func (m *Manager) borrow(run *Run, from, tag string) {
	ctx, cancel := context.WithCancel(context.Background())
	m.mu.Lock()
	if m.borrowed == nil {
		m.borrowed = make(map[string]context.CancelFunc)
	}
	m.borrowed[tag] = cancel
	m.mu.Unlock()
	c := &Carrier{Ctx: ctx, Ask: func(actx context.Context, ir mcp.InputRequest, form jsontext.Value) (jsontext.Value, error) {
		raw, err := m.callPeer(actx, from, &tasks.PeerMsg{Op: tasks.OpAsk, Task: run.ID, Tag: tag, Request: &ir, Form: form})
		if err != nil && !isRPCError(err) {
			cancel() // the lender or its request is gone: ask on the next
		}
		return raw, err
	}, Notify: func(method string, params any) error {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil // cannot be sent anywhere: dropped
		}
		nctx, ncancel := context.WithTimeout(ctx, StoreTimeout)
		defer ncancel()
		if _, err := m.callPeer(nctx, from, &tasks.PeerMsg{Op: tasks.OpNotify, Task: run.ID, Tag: tag, Method: method, Params: raw}); err != nil && !isRPCError(err) {
			cancel() // the lender or its request is gone: send on the next
			return err
		}
		return nil
	}}
	remove := run.addCarrier(c)
	// What the task reported before this request came goes on it now,
	// once the lender has its answer (it waits for it: sending from
	// here could wait on the lender in turn).
	m.wg.Add(1)
	go func() { // owned by the Manager (Shutdown waits); each send is bounded
		defer m.wg.Done()
		run.flushNotes()
	}()
	context.AfterFunc(ctx, func() {
		remove()
		m.mu.Lock()
		delete(m.borrowed, tag)
		m.mu.Unlock()
	})
	context.AfterFunc(runDone(run), cancel)
}

// runDone is a context that ends with the run.
func runDone(run *Run) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // ends with the run
		<-run.done
		cancel()
	}()
	return ctx
}

func isRPCError(err error) bool {
	_, ok := jsonrpc.AsError(err)
	return ok
}

// remoteResult serves a 2025 tasks/result here for a task another
// instance runs: it lends this request to the owner for the task's
// input requests and waits until the task is terminal (a broadcast, or
// the heartbeat's reread, wakes it), failing it if its owner's lease
// runs out. It returns the terminal record.
func (m *Manager) remoteResult(ctx context.Context, lent *Carrier, rec *store.TaskRecord, owner string) (*store.TaskRecord, error) {
	tag := rand.Text()
	m.mu.Lock()
	if m.lent == nil {
		m.lent = make(map[string]*Carrier)
	}
	m.lent[tag] = lent
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.lent, tag)
		m.mu.Unlock()
	}()
	unwatch := m.Watch(rec.ID)
	defer unwatch()
	if _, err := m.callPeer(ctx, owner, &tasks.PeerMsg{Op: tasks.OpLend, Task: rec.ID, Tag: tag}); err == nil {
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StoreTimeout)
			defer cancel()
			_, _ = m.callPeer(rctx, owner, &tasks.PeerMsg{Op: tasks.OpReturn, Task: rec.ID, Tag: tag})
		}()
	}
	for {
		wake := m.watchChan(rec.ID)
		cur, err := m.cfg.Store.Get(ctx, rec.ID)
		if errors.Is(err, store.ErrTaskNotFound) {
			return nil, Unknown(rec.ID)
		} else if err != nil {
			// The store blinked: the client asks again (503), rather
			// than take "unknown task" as the task's end.
			return nil, m.StoreFailed(rec.ID, err)
		}
		cur = m.ReapLapsed(ctx, cur)
		if cur.Status.Terminal() {
			return cur, nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// taskWatch is the requests of this process waiting on one task.
type watch struct {
	n    int
	wake chan struct{} // closed and replaced when the task may have changed
	// seen is the last change of the task this process's listen streams
	// were told of, so that a reread tells them of nothing twice.
	seen       time.Time
	seenStatus mcp.TaskStatus
}

// freshTask reports whether rec is a change this process's listen
// streams have not been told of yet, and records it as told.
func (m *Manager) freshTask(rec *store.TaskRecord) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.watch[rec.ID]
	if w == nil {
		return true
	}
	if !rec.LastUpdatedAt.After(w.seen) && rec.Status == w.seenStatus {
		return false
	}
	w.seen, w.seenStatus = rec.LastUpdatedAt, rec.Status
	return true
}

// Watch registers interest in a task (a waiting tasks/result, a
// listen stream naming it): the heartbeat rereads it, and a lapsed
// owner is noticed. The returned func ends the interest.
func (m *Manager) Watch(id string) func() {
	m.mu.Lock()
	if m.watch == nil {
		m.watch = make(map[string]*watch)
	}
	w := m.watch[id]
	if w == nil {
		w = &watch{wake: make(chan struct{})}
		m.watch[id] = w
	}
	w.n++
	m.startBeatLocked()
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		if w.n--; w.n == 0 {
			delete(m.watch, id)
		}
		m.mu.Unlock()
		m.kickBeat()
	}
}

// watchChan returns a channel closed at the next possible change of a
// watched task (a closed one when it is not watched).
func (m *Manager) watchChan(id string) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.watch[id]; w != nil {
		return w.wake
	}
	c := make(chan struct{})
	close(c)
	return c
}

// wakeWatchers wakes the requests waiting on a task.
func (m *Manager) wakeWatchers(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.watch[id]; w != nil {
		close(w.wake)
		w.wake = make(chan struct{})
	}
}

// checkWatched rereads a watched task (the heartbeat): it fails it if
// its owner's lease ran out, and wakes its waiters when it is terminal,
// so that a lost broadcast delays an outcome by one beat at most.
func (m *Manager) checkWatched(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	rec, err := m.cfg.Store.Get(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrTaskNotFound) {
			m.wakeWatchers(id)
		}
		return
	}
	rec = m.ReapLapsed(ctx, rec)
	if rec.Status.Terminal() {
		m.wakeWatchers(id)
		if rec.Modern && m.host.HasListener(id) && m.freshTask(rec) {
			m.host.NotifyListeners(rec)
		}
	}
}

// remoteUpdate hands tasks/update answers to the instance that runs the
// task.
func (m *Manager) remoteUpdate(ctx context.Context, rec *store.TaskRecord, owner string, responses mcp.InputResponses) error {
	if _, err := m.callPeer(ctx, owner, &tasks.PeerMsg{Op: tasks.OpUpdate, Task: rec.ID, Responses: responses}); err != nil {
		if e, ok := jsonrpc.AsError(err); ok {
			return e
		}
		return jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: the server instance running task %q did not take the answers (%v); send them again (a task whose instance is gone fails within its lease)", rec.ID, err)
	}
	return nil
}

// StopAnywhere cancels the handler of a task wherever it runs and
// reports whether it was running; the owner of a 2025 task also records
// it cancelled, on the session that created it. A task whose owner
// cannot be reached is not running as far as this instance can tell:
// the caller records the cancellation, and the owner, if alive, cancels
// its handler at its next heartbeat (renew).
func (m *Manager) StopAnywhere(ctx context.Context, rec *store.TaskRecord) bool {
	owner := m.RemoteOwner(rec)
	if owner == "" {
		return m.Stop(rec.ID) != nil
	}
	raw, err := m.callPeer(ctx, owner, &tasks.PeerMsg{Op: tasks.OpCancel, Task: rec.ID})
	if err != nil {
		m.cfg.Log.Info("server: the instance of a cancelled task did not answer", "task", rec.ID, "instance", owner, "err", err)
		return false
	}
	var running bool
	_ = json.Unmarshal(raw, &running)
	return running
}

// cancelHere serves tasks.OpCancel on the owner.
func (m *Manager) cancelHere(ctx context.Context, id string) (bool, error) {
	run := m.Stop(id)
	if run == nil {
		return false, nil
	}
	if rec, err := m.cfg.Store.Get(ctx, id); err == nil && !rec.Modern && !rec.Status.Terminal() {
		m.Settle(run, rec, mcp.TaskCancelled, CancelledByClient, nil, nil)
	}
	return true, nil
}
