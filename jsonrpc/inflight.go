package jsonrpc

import (
	"context"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// The peer's requests: admission to an in-flight slot or to the queue of
// requests waiting for one, the handler goroutines, pings answered
// inline, and the drain after the peer's end of input.

// queued is a request admitted while every slot was busy.
type queued struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	msg    *Message
}

// request admits one peer request: it starts its handler on a goroutine
// of its own when a slot is free, queues it when the queue has room, and
// otherwise waits for one or the other. A ping or an initialize is
// answered at once. It reports false when the connection has ended.
func (c *Conn) request(vals context.Context, msg *Message) bool {
	if msg.Method == methodPing || msg.Method == methodInitialize {
		return c.inline(vals, msg)
	}
	ctx, cancel := context.WithCancelCause(c.handling(c.parent(vals), msg))
	c.mu.Lock()
	for {
		if c.err != nil {
			c.mu.Unlock()
			cancel(nil)
			return false
		}
		if _, dup := c.inbound[msg.ID]; dup {
			c.mu.Unlock()
			cancel(nil)
			c.rejectDuplicate(msg.ID)
			return true
		}
		if c.inbound == nil {
			c.inbound = make(map[mcp.ID]context.CancelCauseFunc) // on the first request: an idle Conn holds none
		}
		if c.running < c.opts.MaxInFlight {
			c.running++
			c.inbound[msg.ID] = cancel
			c.handlers.Add(1)
			c.mu.Unlock()
			c.spawn(func() { c.serve(ctx, cancel, msg) })
			return true
		}
		if len(c.queue) < c.opts.MaxQueued {
			c.queue = append(c.queue, queued{ctx, cancel, msg})
			c.inbound[msg.ID] = cancel
			c.mu.Unlock()
			return true
		}
		// Slots and queue are full: pause until a request starts.
		if c.room == nil {
			c.room = make(chan struct{})
		}
		room := c.room
		c.mu.Unlock()
		select {
		case <-room:
		case <-c.done:
			cancel(nil)
			return false
		}
		c.mu.Lock()
	}
}

// parent returns the parent of a request's context: the connection's,
// with the values of vals when the message brought a context of its own.
func (c *Conn) parent(vals context.Context) context.Context {
	if vals != nil && vals != c.base {
		return valuesFrom{Context: c.base, vals: vals}
	}
	return c.base
}

func (c *Conn) rejectDuplicate(id mcp.ID) {
	_ = c.write(c.base, transport.Message{Data: encodeError(id, Errorf(mcp.CodeInvalidRequest, "Invalid Request: id %s is already in use by a request in flight", id))})
}

// inline answers a ping or an initialize on the calling goroutine — the
// reader's, or an HTTP request's — without a slot (see Handler). A ping
// must get through when every slot is busy (MCP basic/utilities/ping: the
// receiver responds promptly); initialize must be done before the requests
// that follow it run (MCP lifecycle: it comes first). A flood of either
// holds nothing: each is answered, its answer written, before the reader
// reads the next message.
func (c *Conn) inline(vals context.Context, msg *Message) bool {
	c.mu.Lock()
	_, dup := c.inbound[msg.ID]
	ended := c.err != nil
	c.mu.Unlock()
	switch {
	case ended:
		return false
	case dup:
		c.rejectDuplicate(msg.ID)
		return true
	}
	result, err := c.handle(c.handling(c.parent(vals), msg), msg)
	c.answer(msg, result, err)
	return true
}

// serve runs the handler of one admitted request and writes its answer.
func (c *Conn) serve(ctx context.Context, cancel context.CancelCauseFunc, msg *Message) {
	defer c.handlers.Done()
	defer cancel(nil)
	// Once the handler is done, its slot and its id are freed before the
	// answer is written: the slot must not be held while the answer waits
	// for the peer to read it (the peer may itself be waiting for our
	// reader, which waits for a slot: a deadlock), and the peer may reuse
	// the id as soon as it has the answer.
	freed, owned := false, false
	defer func() {
		if !freed {
			c.release(msg.ID)
		}
	}()
	var result any
	var err error
	if context.Cause(ctx) != errPeerCancelled { // not cancelled while queued
		result, err = c.handle(ctx, msg)
	}
	freed, owned = true, c.release(msg.ID)
	if !owned {
		return // answered by the drain
	}
	defer c.answering.Done()
	if context.Cause(ctx) == errPeerCancelled {
		return // the peer asked us not to answer
	}
	c.answer(msg, result, err)
}

// answer writes the response to msg.
func (c *Conn) answer(msg *Message, result any, err error) {
	var out []byte
	if err != nil {
		out = encodeError(msg.ID, toError(err))
	} else if out, err = encodeResult(msg.ID, result); err != nil {
		c.log.Error("jsonrpc: encoding result", "method", msg.Method, "err", err)
		out = encodeError(msg.ID, NewError(mcp.CodeInternalError, "Internal error: the result could not be encoded"))
	}
	_ = c.write(c.base, transport.Message{Data: out, Related: msg.ID, Final: true})
}

// release frees the id and the slot of a finished request, handing the
// slot to the first queued request, if any. It reports whether the
// caller still owns the answer (the drain did not give up on it).
func (c *Conn) release(id mcp.ID) (owned bool) {
	c.mu.Lock()
	_, owned = c.inbound[id]
	delete(c.inbound, id)
	if owned {
		c.answering.Add(1) // before abandon can run: see drainInput
	}
	var next queued
	if len(c.queue) > 0 {
		next = c.queue[0]
		c.queue[0] = queued{}
		c.queue = c.queue[1:]
		c.handlers.Add(1) // while this handler still counts: never from zero
	} else {
		c.running--
	}
	c.wakeLocked()
	c.mu.Unlock()
	if next.msg != nil {
		c.spawn(func() { c.serve(next.ctx, next.cancel, next.msg) })
	}
	return owned
}

// spawn starts a handler's goroutine (ConnOptions.Go).
func (c *Conn) spawn(fn func()) {
	if c.opts.Go != nil {
		c.opts.Go(fn)
		return
	}
	go fn()
}

// wakeLocked wakes whoever waits for room (request); c.mu is held.
func (c *Conn) wakeLocked() {
	if c.room != nil {
		close(c.room)
		c.room = nil
	}
}

// drainInput runs on the reader goroutine when the peer has ended its
// input (see ConnOptions.DrainTimeout): this side's pending calls fail,
// the requests already read run to their answers, within DrainTimeout.
func (c *Conn) drainInput() {
	if c.opts.DrainTimeout < 0 {
		return
	}
	c.mu.Lock()
	c.ended = true
	c.mu.Unlock()
	close(c.eof) // pending calls fail now: their handlers can end
	if c.opts.InputEnded != nil {
		c.opts.InputEnded()
	}
	finished := make(chan struct{})
	go func() { c.handlers.Wait(); close(finished) }() // ends with the last handler
	t := time.NewTimer(c.opts.DrainTimeout)
	defer t.Stop()
	select {
	case <-finished:
	case <-c.done: // closed meanwhile
	case <-t.C:
		c.abandon()
		// Answers being written when the time ran out are not cut off
		// (abandon took the others: none can start now).
		written := make(chan struct{})
		go func() { c.answering.Wait(); close(written) }()
		select {
		case <-written:
		case <-c.done:
		}
	}
}

// abandon answers every request still unanswered after DrainTimeout with
// an error; the caller then ends the Conn, which cancels their handlers.
// Their late answers are not written (release reports them not owned).
func (c *Conn) abandon() {
	c.mu.Lock()
	ids := make([]mcp.ID, 0, len(c.inbound))
	for id := range c.inbound {
		ids = append(ids, id)
	}
	clear(c.inbound)
	c.queue = nil // never to start; their contexts end with c.base
	c.mu.Unlock()
	c.log.Warn("jsonrpc: requests unfinished after the peer's end of input; answering with an error",
		"count", len(ids), "drainTimeout", c.opts.DrainTimeout)
	e := Errorf(mcp.CodeInternalError, "Internal error: the request did not finish within %s of the end of input", c.opts.DrainTimeout)
	for _, id := range ids {
		_ = c.write(c.base, transport.Message{Data: encodeError(id, e), Related: id, Final: true})
	}
}
