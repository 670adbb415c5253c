// Package gateway serves one or more upstream MCP servers, of any era and
// over any transport, to clients of both eras through one mcpkit server.
//
// An upstream is a command speaking stdio, a Streamable HTTP URL, a
// 2024-11-05 HTTP+SSE URL, or any transport.Conn; it may speak a legacy
// revision (initialize, sessions) or 2026-07-28. The gateway connects to
// each with the client package, lists what it offers (following every
// page) and registers it on its own server.Server under the upstream's
// prefix: tools and prompts as "<prefix>_<name>", resources and templates
// as "<prefix>+<uri>". The server serves both eras to clients, on stdio
// (server.Serve) or Streamable HTTP (streamhttp.NewHandler), with every
// server option: interceptors, visibility, sealed request state, several
// instances over shared stores.
//
// Era bridging:
//   - A 2026-07-28 upstream's input-required results are passed to the
//     client as the gateway's own (the legacy shim asks a legacy client
//     with real requests); the upstream's requestState travels sealed in
//     the gateway's, so a retry may reach any instance.
//   - A legacy upstream's elicitation and sampling requests, made while it
//     handles a call, become input requests of that call: input-required
//     results for a 2026 client, real requests for a legacy one. The
//     upstream call is held open meanwhile (a pending call, named in the
//     sealed requestState), bounded by Options.InputTimeout,
//     Options.MaxPending and Options.MaxPendingPerClient.
//
// Attribution is certain or refused, never guessed: each call to a legacy
// upstream holds an upstream connection of its own (Upstream.MaxConnections)
// for its whole run, and what the upstream sends on it belongs to that
// call; a call the gateway stops waiting for has its connection closed. A
// 2026 upstream's calls share its one connection; its log messages reach
// a call only when it is certainly theirs. Per-client caps
// (Options.MaxInFlightPerClient, MaxPendingPerClient, ClientKey) keep one
// client from holding an upstream's slots and connections.
//
// Identity: an upstream reached by URL is called with the gateway's
// own headers (the default), or for each caller (Upstream.Identity): the
// caller's own bearer token, to the upstream's origin only, or a token
// exchanged for the upstream (RFC 8693), cached per caller token until it
// nears its expiry (Options.TokenCacheSize, TokenExpiryMargin). The
// caller's token is kept by CallerTokens, outside the authentication
// middleware; the call connections of such an upstream are then each
// bound to one caller and leased to that caller's calls only
// (docs/design/gateway-identity.md).
//
// Progress, log messages, cancellation, list changes and resource
// updates pass through. An upstream that fails to start or dies is
// reported (Health, the log), its items are withdrawn (clients get
// list_changed notifications), and it is reconnected with a backoff; its
// items come back when it does.
//
// See docs/design/gateway.md (Attribution, Fairness). Package gateway
// uses the public API of server and client only (and auth/oauth's
// challenge parser, for an upstream's refusal); it must not import
// server/streamhttp (the caller chooses the carrier; its tests do),
// store/redis or any internal package but internal/jsontok.
package gateway
