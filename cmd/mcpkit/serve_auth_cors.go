package main

import (
	"net/http"

	"github.com/mcpkit/mcpkit/auth"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// demoASCORS is the CORS policy of the demo authorization server's
// endpoints a browser client calls (metadata, token, registration) and
// of the protected resource metadata, for "mcpkit serve --http --auth
// --cors-origin": the origins (and extra headers) of the MCP endpoint's
// policy, so that one list governs discovery and the calls. nil without
// --cors-origin: the authorization server answers no CORS, and the
// metadata document stays open to every origin.
func demoASCORS(c *streamhttp.CORSOptions) *auth.CORSOptions {
	if c == nil {
		return nil
	}
	return &auth.CORSOptions{AllowedOrigins: c.AllowedOrigins, AllowedHeaders: c.AllowedHeaders, MaxAge: c.MaxAge}
}

// handle registers h for method and path on mux; with a CORS policy, it
// is wrapped in it and the path also answers OPTIONS (preflights in the
// policy, 204 with Allow otherwise). The authorization page is not
// registered here: a browser navigates to it, no page fetches it.
func (a *demoAS) handle(mux *http.ServeMux, method, path string, h http.HandlerFunc) {
	if a.cors == nil {
		mux.Handle(method+" "+path, h)
		return
	}
	mux.Handle(method+" "+path, auth.CORS(a.cors, []string{method}, h))
	mux.Handle("OPTIONS "+path, auth.CORS(a.cors, []string{method}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", method+", OPTIONS")
		w.WriteHeader(http.StatusNoContent)
	})))
}
