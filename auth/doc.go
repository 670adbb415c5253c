// Package auth is the OAuth 2.1 resource-server side of MCP
// authorization (MCP authorization): a plain func(http.Handler) http.Handler
// middleware (Require) that verifies bearer tokens through a pluggable
// Verifier, answers 401/403/400 with the RFC 6750 and RFC 9728
// WWW-Authenticate challenges MCP clients act on, enforces per-method
// and per-tool scope requirements (reading the body only of requests
// whose token it has verified), and puts the verified TokenInfo in
// the request context; a JWT verifier (JWTVerifier) on go-jose with a
// cached, rotating JWKS fetched over https only (http on loopback
// hosts), following no redirect to another origin, and RFC 8707
// audience binding; an introspection verifier (IntrospectionVerifier,
// RFC 7662) for opaque tokens, caching active answers by token hash for
// a bounded time; DPoP-bound tokens (RFC 9449: DPoPVerifier, set as
// Options.DPoP), whose proofs are checked on every request against the
// request, the token's cnf.jkt and a ReplayCache (MemoryReplayCache in
// one process; store/redis holds one for several instances), with
// optional stateless server nonces; and the RFC 9728
// Protected Resource Metadata document (ProtectedResourceHandler,
// MountProtectedResource, open to pages of every origin unless
// ProtectedResourceOptions.CORS narrows it); and CORS, the cross-origin
// policy of the public OAuth endpoints a browser client reads in
// discovery (docs/design/cors.md), never allowing credentials.
//
// The middleware binds the authenticated principal to the request with
// server.WithPrincipal, so that sealed MRTR request state minted for one
// principal is refused to any other. Tokens are never logged, never put
// in errors, and the Authorization and DPoP headers are removed before
// the request reaches the wrapped handler (tokens are not passed
// upstream). docs/design/dpop-introspection.md gives the DPoP and
// introspection rules and decisions.
//
// Package auth imports server (for WithPrincipal only), jsonrpc (the same
// strict decoder the server uses, so that the scope peek and the server
// agree on what a body says), internal/httpbody (the server's own body
// reader, with its size and time bounds), internal/corsorigin (the CORS
// rules it shares with server/streamhttp), internal/expiry (the replay
// cache's expiry queue) and mcp. It must not import
// client or any transport package, nor the OAuth client (auth/oauth);
// only its end-to-end DPoP test does, to run that client against
// Require.
package auth
