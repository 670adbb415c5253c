// Package workers keeps goroutines warm for short handlers: a Pool runs
// each function on an idle goroutine of its own when it has one, and on a
// new goroutine otherwise. A goroutine that has served a request keeps the
// stack it grew, so the next request does not pay for growing (copying) a
// fresh goroutine's stack again. server/streamhttp runs the handlers of its
// legacy sessions on one pool, and server those of each session over a
// connection (stdio, Server.Connect) on a small pool of its own
// (jsonrpc.ConnOptions.Go).
//
// A reused goroutine keeps what a function left on it: pprof labels set
// with SetGoroutineLabels, a LockOSThread not undone. Handlers must not
// leave either (pprof.Do undoes its labels).
//
// It imports no mcpkit package.
package workers
