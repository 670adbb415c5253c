// Package workers keeps goroutines warm for short handlers: a Pool runs
// each function on an idle goroutine of its own when it has one, and on a
// new goroutine otherwise. A goroutine that has served a request keeps the
// stack it grew, so the next request does not pay for growing (copying) a
// fresh goroutine's stack again; the legacy sessions of server/streamhttp
// run their handlers on one (jsonrpc.ConnOptions.Go).
//
// It imports no mcpkit package.
package workers
