// Package oauth owns the client side of MCP authorization (the
// "Authorization" chapter of the MCP specification, both the 2025-11-25 and
// the 2026-07-28 revisions, plus the 2025-03-26 fallbacks).
//
// Its centre is Transport, an http.RoundTripper that puts
// "Authorization: Bearer" on every request and, when the MCP server answers
// 401 (or 403 insufficient_scope), runs the OAuth 2.1 flow and replays the
// request:
//
//	t := &oauth.Transport{
//		RedirectURL: lb.RedirectURL(),
//		Authorize:   lb.Authorize, // or oauth.Headless(nil) in tests
//	}
//	conn := streamable.New(url, &streamable.Options{HTTPClient: &http.Client{Transport: t}})
//
// The flow:
//
//   - Discovery. The protected resource metadata (RFC 9728) comes from the
//     resource_metadata parameter of the WWW-Authenticate challenge, else
//     from /.well-known/oauth-protected-resource<path>, else from the root.
//     Its resource must designate the MCP server (same origin, path prefix)
//     or the flow stops before any request to an authorization server. The
//     authorization server metadata is fetched in the specification's order
//     (RFC 8414 then OpenID Connect, path-aware) and its issuer must equal,
//     as a string, the issuer the well-known URL was built from. Without
//     protected resource metadata the server's origin is taken as the
//     authorization server (2025-03-26), and without any metadata its
//     /authorize, /token and /register endpoints are used.
//   - Registration, in order: pre-registered credentials
//     (Transport.Client), a Client ID Metadata Document URL
//     (Transport.ClientIDMetadataURL) when the server advertises
//     client_id_metadata_document_supported, Dynamic Client Registration
//     (RFC 7591), else *RegistrationError.
//   - Authorization code with PKCE S256 (refused when the server does not
//     advertise S256), state, RFC 8707 resource indicators and RFC 9207
//     issuer identification compared as exact strings; the code is
//     exchanged with client_secret_basic, client_secret_post or none as the
//     server supports. Refresh tokens are used when a token is rejected.
//   - Scopes: the challenge's scope, else all of the resource's
//     scopes_supported, else none; 403 insufficient_scope re-authorizes with
//     the union of the scopes held and challenged. One request runs at most
//     MaxAuthorizations flows, then fails with *TooManyAuthorizationsError.
//
// The OAuth extensions of MCP:
//
//   - Grants without a user (Transport.Grant), used instead of the
//     authorization code flow after the same discovery and registration,
//     with the same resource indicator and scope choice:
//     ClientCredentials (RFC 6749 §4.4), and JWTBearer (RFC 7523 §2.1) with
//     a workload identity token (StaticAssertion) or an enterprise
//     ID-JAG obtained by IDJAGExchange (SEP-990: an RFC 8693 token exchange
//     of the user's ID token at the IdP). A refused grant is not retried.
//   - private_key_jwt client authentication (RFC 7523 §2.2): a
//     ClientInfo with a PrivateKey (ParsePrivateKeyPEM) signs a fresh
//     assertion per token request, iss = sub = client_id, aud = the
//     authorization server's issuer identifier (RFC 7523bis).
//   - DPoP (RFC 9449, Transport.DPoP): a proof on every token request and,
//     with a DPoP-bound token, "Authorization: DPoP" and a proof with ath
//     on every request to the MCP server; use_dpop_nonce challenges of the
//     token endpoint (400) and of the MCP server (401) are answered by one
//     retry with the server's nonce, kept per origin for later proofs.
//
// What the client trusts:
//
//   - https only. The MCP server URL, a resource_metadata URL, the
//     issuer, the authorization, token and registration endpoints, the
//     Client ID Metadata Document URL and an IdP's token endpoint must be
//     https; plain http is accepted for loopback hosts only (localhost,
//     127.0.0.0/8, [::1]). A resource_metadata URL may name another
//     origin than the server (RFC 9728), but a loopback one only for a
//     server on loopback. A refused URL is an *InsecureURLError, and no
//     request is made to it.
//   - No redirect to elsewhere. Token, registration and token exchange
//     requests carry credentials and follow no redirect; metadata GETs
//     follow redirects within their own origin (at most 3). A refused
//     redirect is a *RedirectError naming the endpoint and the target,
//     which receives nothing.
//
// Client registrations and tokens live in a Store, keyed by the
// authorization server's issuer: what one server issued is never presented
// to another, and a resource that moves to a new authorization server gets
// a new registration there.
//
// The authorization step itself (sending the user to the authorization
// URL and receiving the redirect) is an AuthorizeFunc: Headless follows
// the URL without a browser (for tests and conformance mocks that redirect
// at once), and Loopback prints or opens the URL and receives the redirect
// on a loopback listener, where only the request carrying the flow's
// state ends the wait (any other is answered with an error and ignored).
//
// Besides the standard library, the package imports go-jose, which signs
// its JWTs (private_key_jwt assertions, DPoP proofs); it imports no other
// mcpkit package.
package oauth
