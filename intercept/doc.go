// Package intercept is the one hook mcpkit's server and client give
// their users around every message: an Interceptor wraps the handling of
// each request and notification, inbound and outbound, in both protocol
// eras, the way net/http middleware wraps a handler (connect-go's
// interceptors are the model).
//
// An Interceptor receives the next Handler and returns a Handler that
// usually does something, calls next, and does something with what it
// answered:
//
//	func timing(log *slog.Logger) intercept.Interceptor {
//		return func(next intercept.Handler) intercept.Handler {
//			return func(ctx context.Context, c *intercept.Call) (any, error) {
//				start := time.Now()
//				res, err := next(ctx, c)
//				log.Info("mcp", "method", c.Method, "took", time.Since(start), "err", err)
//				return res, err
//			}
//		}
//	}
//
// # Where interceptors run
//
// server.Options.Interceptors and client.Options.Interceptors install a
// chain; the same chain sees every message of that side, told apart by
// Call.Inbound and Call.Notification:
//
//   - Server, inbound requests: every method of both eras (initialize,
//     ping, server/discover, subscriptions/listen, the tasks methods and
//     every method of the dispatch table), on stdio, on legacy sessions
//     over HTTP, session-less legacy HTTP and the 2026-07-28 POST path.
//     The chain wraps the whole request: a 2026-07-28 multi round-trip
//     retry is a request of its own (Call.Round is 1 when it carries a
//     requestState); on a legacy session the shim's rounds happen inside
//     next.
//   - Server, inbound notifications (notifications/initialized, …).
//   - Server, outbound: what a handler sends through its Request
//     (progress, log messages, elicitation, sampling and roots requests)
//     and the legacy shim's server→client requests, one Call per leg with
//     Call.Round the shim's round (1, 2, …) and Call.Related the request
//     being served.
//   - Client, outbound: every request and notification it sends, in both
//     eras; each round of the multi round-trip driver is a Call of its own
//     (Call.Round 0 for the first request, then 1, 2, …).
//   - Client, inbound: the server's requests (legacy elicitation,
//     sampling, roots, ping), the input requests of a 2026-07-28
//     input-required result, which the client answers with the same
//     handlers (Call.Round names the round that carried them), and every
//     notification.
//
// # Order and errors
//
// The first interceptor of the list is the outermost: for Interceptors
// {A, B}, a message goes through A, then B, then the SDK; the answer
// comes back through B, then A. The server always puts Recover outside
// the user's chain, so a panic in a handler or an interceptor becomes a
// -32603 answer.
//
// An interceptor may change the Call before calling next (Params, Meta
// with SetMeta, Method — it then reaches the handler of that method),
// change the result or the error next returned, or answer itself without
// calling next. An error returned to the SDK is answered as a handler's
// error is: a *jsonrpc.Error keeps its code, message and data; any other
// error is -32603 on a server, and is returned to the caller on a client
// (outbound) or answered -32603 (inbound). A result an interceptor makes
// up on the client's outbound side is encoded and decoded into the
// caller's result, as if the server had sent it. For notifications the
// result is ignored; an error, or not calling next, drops the
// notification (it is not sent, or not handled).
//
// # Concurrency
//
// Handlers run concurrently: one Call per message, on the goroutine that
// handles it. An interceptor must be safe for concurrent use, must not
// keep the Call after it returns, and must not use it from another
// goroutine while next runs.
//
// Package intercept imports mcp and jsonrpc; server and client import
// it, never the reverse.
package intercept
