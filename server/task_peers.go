package server

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

// remoteOwner returns the instance that runs rec when it is another one
// this server can reach; "" otherwise.
func (s *Server) remoteOwner(rec *store.TaskRecord) string {
	owner := rec.Owner
	if owner == "" {
		owner = tasks.OwnerOf(rec.ID)
	}
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if owner == "" || owner == s.tasks.instance || s.tasks.peers == nil {
		return ""
	}
	return owner
}

// attachPeers implements seam.Protocol.AttachPeers.
func (s *Server) attachPeers(p seam.Peers) (seam.PeerHandler, func()) {
	s.tasks.mu.Lock()
	s.tasks.peers, s.tasks.instance = p, p.ID()
	s.tasks.mu.Unlock()
	detach := func() {
		s.tasks.mu.Lock()
		if s.tasks.peers == p {
			s.tasks.peers = nil
		}
		s.tasks.mu.Unlock()
	}
	return seam.PeerHandler{Serve: s.servePeer, Deliver: s.deliverPeer}, detach
}

func (s *Server) peers() seam.Peers {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	return s.tasks.peers
}

// callPeer sends m to instance to and decodes its answer: the result,
// the error it carries as a *jsonrpc.Error, or errPeerGone.
func (s *Server) callPeer(ctx context.Context, to string, m *tasks.PeerMsg) (jsontext.Value, error) {
	p := s.peers()
	if p == nil {
		return nil, errPeerGone
	}
	m.From = p.ID()
	b, err := json.Marshal(m)
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

// tellPeers broadcasts that a task's record changed.
func (s *Server) tellPeers(id string) {
	p := s.peers()
	if p == nil {
		return
	}
	b, err := json.Marshal(&tasks.PeerMsg{Op: tasks.OpStatus, Task: id, From: p.ID()})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), taskStoreTimeout)
	defer cancel()
	if err := p.Broadcast(ctx, b); err != nil {
		s.log.Debug("server: task status not broadcast", "task", id, "err", err)
	}
}

// deliverPeer takes a broadcast. It runs on the carrier's delivery
// goroutine: it wakes local waiters at once and leaves anything that
// reads the store to a goroutine of the server's.
func (s *Server) deliverPeer(raw []byte) {
	var m tasks.PeerMsg
	if json.Unmarshal(raw, &m) != nil || m.Op != tasks.OpStatus || m.Task == "" {
		return
	}
	s.wakeWatchers(m.Task)
	if !s.hasTaskListener(m.Task) && s.taskRun(m.Task) == nil {
		return
	}
	s.tasks.mu.Lock()
	if s.tasks.closing {
		s.tasks.mu.Unlock()
		return
	}
	s.tasks.wg.Add(1)
	s.tasks.mu.Unlock()
	go func() { // owned by the server: Shutdown waits for it; bounded by taskStoreTimeout
		defer s.tasks.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), taskStoreTimeout)
		defer cancel()
		rec, err := s.taskStore().Get(ctx, m.Task)
		if err != nil {
			return
		}
		if run := s.taskRun(rec.ID); run != nil && rec.Status.Terminal() {
			run.cancel(errTaskCancelled) // settled elsewhere
		}
		if rec.Modern && s.freshTask(rec) {
			s.notifyTaskListeners(rec)
		}
	}()
}

// servePeer answers another instance's call about a task of this one,
// or about a request lent here.
func (s *Server) servePeer(ctx context.Context, raw []byte) []byte {
	var m tasks.PeerMsg
	var r tasks.PeerReply
	if err := json.Unmarshal(raw, &m); err != nil {
		r.Error = &mcp.TaskError{Code: mcp.CodeInvalidRequest, Message: "Invalid request: " + err.Error()}
	} else {
		r = s.servePeerMsg(ctx, &m)
	}
	b, err := json.Marshal(&r)
	if err != nil {
		b, _ = json.Marshal(&tasks.PeerReply{Error: &mcp.TaskError{Code: mcp.CodeInternalError, Message: "Internal error: encoding the answer"}})
	}
	return b
}

func (s *Server) servePeerMsg(ctx context.Context, m *tasks.PeerMsg) tasks.PeerReply {
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
	switch m.Op {
	case tasks.OpCancel:
		return reply(s.cancelHere(ctx, m.Task))
	case tasks.OpUpdate:
		rec, err := s.taskStore().Get(ctx, m.Task)
		if err != nil {
			return tasks.PeerReply{Gone: true}
		}
		return reply(s.updateTask(ctx, rec, m.Responses))
	case tasks.OpLend:
		run := s.taskRun(m.Task)
		if run == nil {
			return tasks.PeerReply{Gone: true}
		}
		s.borrow(run, m.From, m.Tag)
		return reply(true, nil)
	case tasks.OpReturn:
		s.tasks.mu.Lock()
		cancel := s.tasks.borrowed[m.Tag]
		s.tasks.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return reply(true, nil)
	case tasks.OpAsk:
		s.tasks.mu.Lock()
		c := s.tasks.lent[m.Tag]
		s.tasks.mu.Unlock()
		if c == nil || m.Request == nil {
			return tasks.PeerReply{Gone: true}
		}
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(c.ctx, cancel)
		defer stop()
		return reply(s.leg(actx, c.req, *m.Request, m.Form))
	case tasks.OpNotify:
		s.tasks.mu.Lock()
		c := s.tasks.lent[m.Tag]
		s.tasks.mu.Unlock()
		if c == nil || m.Method == "" || c.ctx.Err() != nil {
			return tasks.PeerReply{Gone: true}
		}
		return reply(true, c.req.out.Notify(c.ctx, c.req.id, m.Method, m.Params))
	}
	return tasks.PeerReply{Error: &mcp.TaskError{Code: mcp.CodeMethodNotFound, Message: "Method not found: " + m.Op}}
}

// borrow registers, on the owner, a tasks/result request of another
// instance as a carrier of the task's input requests. It lasts until
// the lender returns it, or an ask finds it gone.
func (s *Server) borrow(run *taskRun, from, tag string) {
	ctx, cancel := context.WithCancel(context.Background())
	s.tasks.mu.Lock()
	if s.tasks.borrowed == nil {
		s.tasks.borrowed = make(map[string]context.CancelFunc)
	}
	s.tasks.borrowed[tag] = cancel
	s.tasks.mu.Unlock()
	c := &carrier{ctx: ctx, ask: func(actx context.Context, ir mcp.InputRequest, form jsontext.Value) (jsontext.Value, error) {
		raw, err := s.callPeer(actx, from, &tasks.PeerMsg{Op: tasks.OpAsk, Task: run.id, Tag: tag, Request: &ir, Form: form})
		if err != nil && !isRPCError(err) {
			cancel() // the lender or its request is gone: ask on the next
		}
		return raw, err
	}, notify: func(method string, params any) error {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil // cannot be sent anywhere: dropped
		}
		nctx, ncancel := context.WithTimeout(ctx, taskStoreTimeout)
		defer ncancel()
		if _, err := s.callPeer(nctx, from, &tasks.PeerMsg{Op: tasks.OpNotify, Task: run.id, Tag: tag, Method: method, Params: raw}); err != nil && !isRPCError(err) {
			cancel() // the lender or its request is gone: send on the next
			return err
		}
		return nil
	}}
	remove := run.addCarrier(c)
	// What the task reported before this request came goes on it now,
	// once the lender has its answer (it waits for it: sending from
	// here could wait on the lender in turn).
	s.tasks.wg.Add(1)
	go func() { // owned by the server (Shutdown waits); each send is bounded
		defer s.tasks.wg.Done()
		run.flushNotes()
	}()
	context.AfterFunc(ctx, func() {
		remove()
		s.tasks.mu.Lock()
		delete(s.tasks.borrowed, tag)
		s.tasks.mu.Unlock()
	})
	context.AfterFunc(runDone(run), cancel)
}

// runDone is a context that ends with the run.
func runDone(run *taskRun) context.Context {
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
func (s *Server) remoteResult(ctx context.Context, req *Request, rec *store.TaskRecord, owner string) (*store.TaskRecord, error) {
	tag := rand.Text()
	s.tasks.mu.Lock()
	if s.tasks.lent == nil {
		s.tasks.lent = make(map[string]*carrier)
	}
	s.tasks.lent[tag] = &carrier{ctx: ctx, req: req}
	s.tasks.mu.Unlock()
	defer func() {
		s.tasks.mu.Lock()
		delete(s.tasks.lent, tag)
		s.tasks.mu.Unlock()
	}()
	unwatch := s.watchTask(rec.ID)
	defer unwatch()
	if _, err := s.callPeer(ctx, owner, &tasks.PeerMsg{Op: tasks.OpLend, Task: rec.ID, Tag: tag}); err == nil {
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskStoreTimeout)
			defer cancel()
			_, _ = s.callPeer(rctx, owner, &tasks.PeerMsg{Op: tasks.OpReturn, Task: rec.ID, Tag: tag})
		}()
	}
	for {
		wake := s.watchChan(rec.ID)
		cur, err := s.taskStore().Get(ctx, rec.ID)
		if errors.Is(err, store.ErrTaskNotFound) {
			return nil, unknownTask(rec.ID)
		} else if err != nil {
			// The store blinked: the client asks again (503), rather
			// than take "unknown task" as the task's end.
			return nil, s.taskStoreFailed(rec.ID, err)
		}
		cur = s.reapLapsed(ctx, cur)
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
type taskWatch struct {
	n    int
	wake chan struct{} // closed and replaced when the task may have changed
	// seen is the last change of the task this process's listen streams
	// were told of, so that a reread tells them of nothing twice.
	seen       time.Time
	seenStatus mcp.TaskStatus
}

// freshTask reports whether rec is a change this process's listen
// streams have not been told of yet, and records it as told.
func (s *Server) freshTask(rec *store.TaskRecord) bool {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	w := s.tasks.watch[rec.ID]
	if w == nil {
		return true
	}
	if !rec.LastUpdatedAt.After(w.seen) && rec.Status == w.seenStatus {
		return false
	}
	w.seen, w.seenStatus = rec.LastUpdatedAt, rec.Status
	return true
}

// watchTask registers interest in a task (a waiting tasks/result, a
// listen stream naming it): the heartbeat rereads it, and a lapsed
// owner is noticed. The returned func ends the interest.
func (s *Server) watchTask(id string) func() {
	s.tasks.mu.Lock()
	if s.tasks.watch == nil {
		s.tasks.watch = make(map[string]*taskWatch)
	}
	w := s.tasks.watch[id]
	if w == nil {
		w = &taskWatch{wake: make(chan struct{})}
		s.tasks.watch[id] = w
	}
	w.n++
	s.startBeatLocked()
	s.tasks.mu.Unlock()
	return func() {
		s.tasks.mu.Lock()
		if w.n--; w.n == 0 {
			delete(s.tasks.watch, id)
		}
		s.tasks.mu.Unlock()
		s.kickBeat()
	}
}

// watchChan returns a channel closed at the next possible change of a
// watched task (a closed one when it is not watched).
func (s *Server) watchChan(id string) <-chan struct{} {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if w := s.tasks.watch[id]; w != nil {
		return w.wake
	}
	c := make(chan struct{})
	close(c)
	return c
}

// wakeWatchers wakes the requests waiting on a task.
func (s *Server) wakeWatchers(id string) {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if w := s.tasks.watch[id]; w != nil {
		close(w.wake)
		w.wake = make(chan struct{})
	}
}

// checkWatched rereads a watched task (the heartbeat): it fails it if
// its owner's lease ran out, and wakes its waiters when it is terminal,
// so that a lost broadcast delays an outcome by one beat at most.
func (s *Server) checkWatched(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), taskStoreTimeout)
	defer cancel()
	rec, err := s.taskStore().Get(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrTaskNotFound) {
			s.wakeWatchers(id)
		}
		return
	}
	rec = s.reapLapsed(ctx, rec)
	if rec.Status.Terminal() {
		s.wakeWatchers(id)
		if rec.Modern && s.hasTaskListener(id) && s.freshTask(rec) {
			s.notifyTaskListeners(rec)
		}
	}
}

// hasTaskListener reports whether a listen stream here names the task.
func (s *Server) hasTaskListener(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		for _, t := range l.filter.TaskIDs {
			if t == id {
				return true
			}
		}
	}
	return false
}

// remoteUpdate hands tasks/update answers to the instance that runs the
// task.
func (s *Server) remoteUpdate(ctx context.Context, rec *store.TaskRecord, owner string, responses mcp.InputResponses) (any, error) {
	if _, err := s.callPeer(ctx, owner, &tasks.PeerMsg{Op: tasks.OpUpdate, Task: rec.ID, Responses: responses}); err != nil {
		if e, ok := jsonrpc.AsError(err); ok {
			return nil, e
		}
		return nil, jsonrpc.Errorf(mcp.CodeInternalError, "Internal error: the server instance running task %q did not take the answers (%v); send them again (a task whose instance is gone fails within its lease)", rec.ID, err)
	}
	return &mcp.EmptyResult{}, nil
}

// stopTaskAnywhere cancels the handler of a task wherever it runs and
// reports whether it was running; the owner of a 2025 task also records
// it cancelled, on the session that created it. A task whose owner
// cannot be reached is not running as far as this instance can tell:
// the caller records the cancellation, and the owner, if alive, cancels
// its handler at its next heartbeat (renew).
func (s *Server) stopTaskAnywhere(ctx context.Context, rec *store.TaskRecord) bool {
	owner := s.remoteOwner(rec)
	if owner == "" {
		return s.stopTask(rec.ID) != nil
	}
	raw, err := s.callPeer(ctx, owner, &tasks.PeerMsg{Op: tasks.OpCancel, Task: rec.ID})
	if err != nil {
		s.log.Info("server: the instance of a cancelled task did not answer", "task", rec.ID, "instance", owner, "err", err)
		return false
	}
	var running bool
	_ = json.Unmarshal(raw, &running)
	return running
}

// cancelHere serves tasks.OpCancel on the owner.
func (s *Server) cancelHere(ctx context.Context, id string) (bool, error) {
	run := s.stopTask(id)
	if run == nil {
		return false, nil
	}
	if rec, err := s.taskStore().Get(ctx, id); err == nil && !rec.Modern && !rec.Status.Terminal() {
		s.settle(run, rec, mcp.TaskCancelled, legacyCancelMessage, nil, nil)
	}
	return true, nil
}

// endedBy settles a task whose server is shutting down as failed, and
// reports whether that is why ctx ended.
func (s *Server) endedBy(ctx context.Context, run *taskRun, rec *store.TaskRecord) bool {
	if ctx.Err() == nil || !errors.Is(context.Cause(ctx), errServerShutdown) {
		return false
	}
	const msg = "the server shut down before the task finished"
	s.settle(run, rec, mcp.TaskFailed, msg, nil, &mcp.TaskError{Code: mcp.CodeInternalError, Message: "Internal error: " + msg})
	return true
}
