// Package corsorigin holds the rules of a CORS allow-list that the
// Streamable HTTP server (server/streamhttp) and the OAuth endpoints
// (auth) share: which origins a list names, how an Origin header is
// matched against it (by name, or through "*" for any http or https
// origin), what a header name may be, and the Access-Control-Max-Age
// value. One set of rules, so that both answer a browser alike
// (docs/design/cors.md).
//
// It imports no other mcpkit package.
package corsorigin
