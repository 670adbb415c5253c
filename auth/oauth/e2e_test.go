package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/server/streamhttp"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// TestEndToEnd runs a real mcpkit server behind a minimal bearer check
// (tokens issued by the fake authorization server of this package, the
// tools/call method needing the mcp:tools scope) and connects a real
// client over Streamable HTTP through a Transport, in both eras.
func TestEndToEnd(t *testing.T) {
	for _, version := range []string{"", mcp.LatestLegacy, mcp.Version20260728} {
		t.Run("version="+version, func(t *testing.T) {
			as := newFakeAS(t, func(a *fakeAS) {
				a.issSupported = true
				a.refresh = true
				a.scopes = []string{"mcp:read", "mcp:tools", "offline_access"}
			})
			s := server.New(&server.Options{Info: mcp.Implementation{Name: "protected", Version: "1"}})
			server.AddTool(s, &mcp.Tool{Name: "add"}, func(ctx context.Context, req *server.CallToolRequest, in struct{ A, B int }) (int, error) {
				return in.A + in.B, nil
			})
			mcpHandler := streamhttp.NewHandler(s, nil)

			var rsURL string
			prmPath := "/.well-known/oauth-protected-resource/mcp"
			mux := http.NewServeMux()
			mux.HandleFunc("GET "+prmPath, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(map[string]any{
					"resource":              rsURL + "/mcp",
					"authorization_servers": []string{as.Issuer()},
					"scopes_supported":      []string{"mcp:read", "mcp:tools"},
				})
			})
			// The bearer check: a token the AS issued for this resource,
			// with mcp:tools for tools/call.
			mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
				chal := fmt.Sprintf(`Bearer resource_metadata="%s%s"`, rsURL, prmPath)
				tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
				scope, known := "", false
				if ok {
					scope, known = as.scopeOf(tok)
				}
				if !known {
					w.Header().Set("WWW-Authenticate", chal+`, scope="mcp:read"`)
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				if r.Method == http.MethodPost && r.Body != nil {
					var peek struct {
						Method string `json:"method"`
					}
					body, _ := readAllAndRestore(r)
					_ = json.Unmarshal(body, &peek)
					if peek.Method == "tools/call" && !strings.Contains(" "+scope+" ", " mcp:tools ") {
						w.Header().Set("WWW-Authenticate", chal+`, error="insufficient_scope", scope="mcp:tools"`)
						http.Error(w, "forbidden", http.StatusForbidden)
						return
					}
				}
				mcpHandler.ServeHTTP(w, r)
			})
			rs := httptest.NewServer(mux)
			defer rs.Close()
			rsURL = rs.URL

			tr := &Transport{Authorize: Headless(nil), RedirectURL: "http://127.0.0.1:9/callback", OfflineAccess: true}
			conn := streamable.New(rs.URL+"/mcp", &streamable.Options{HTTPClient: &http.Client{Transport: tr}})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := client.Connect(ctx, conn, &client.Options{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer c.Close()
			tools, err := c.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			if len(tools.Tools) != 1 {
				t.Fatalf("tools %v", tools.Tools)
			}
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: []byte(`{"A":2,"B":3}`)})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if res.IsError || len(res.Content) == 0 {
				t.Fatalf("CallTool result %+v", res)
			}
			// One authorization with the challenge's scope, one step-up with
			// the union (offline_access added: the AS lists it).
			if n := as.authorizations(); n != 2 {
				t.Fatalf("%d authorizations, want 2", n)
			}
			if got := as.authQueries[0].Get("scope"); got != "mcp:read offline_access" {
				t.Errorf("first scope %q", got)
			}
			if got := as.authQueries[1].Get("scope"); got != "mcp:read offline_access mcp:tools" {
				t.Errorf("step-up scope %q", got)
			}
			// The access tokens expire server-side: the next request is
			// refused, and the Transport refreshes instead of authorizing.
			as.revokeAll()
			if _, err := c.ListTools(ctx, nil); err != nil {
				t.Fatalf("ListTools after revocation: %v", err)
			}
			if n := as.authorizations(); n != 2 {
				t.Errorf("%d authorizations after the refresh, want 2", n)
			}
			as.mu.Lock()
			last := as.tokenForms[len(as.tokenForms)-1]
			as.mu.Unlock()
			if last.Get("grant_type") != "refresh_token" || last.Get("resource") != rs.URL+"/mcp" {
				t.Errorf("last token request %v", last)
			}
		})
	}
}
