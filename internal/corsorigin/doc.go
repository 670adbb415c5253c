// Package corsorigin holds the rules of a CORS allow-list that the
// Streamable HTTP server (server/streamhttp) and the OAuth endpoints
// (auth) share: which origins a list names, how an Origin header is
// matched against it (by name, or through "*" for any http or https
// origin), the Access-Control-Max-Age value,
// and the whole decision on a request (Policy.Apply): a preflight's
// answer or refusal, and the headers of an allowed answer. Each caller
// writes a refusal in its own shape (a JSON-RPC error, an OAuth error).
// One set of rules, so that both answer a browser alike
// (docs/design/cors.md).
//
// It imports internal/mcpheader (the header-name rule) and no other
// mcpkit package.
package corsorigin
