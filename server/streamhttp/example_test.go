package streamhttp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Serving a server over Streamable HTTP, to clients of both eras at the
// same endpoint. Mount the handler on any mux; shut it down before the
// http.Server so that its sessions and streams end first.
func ExampleNewHandler() {
	s := server.New(&server.Options{Info: mcp.Implementation{Name: "greeter", Version: "1.0.0"}})
	err := server.AddTool(s, &mcp.Tool{Name: "greet"},
		func(ctx context.Context, req *server.CallToolRequest, in struct {
			Name string `json:"name"`
		}) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})
	if err != nil {
		log.Fatal(err)
	}
	// nil: the defaults. Behind a proxy or on a public name, list the
	// Host values the server answers to in Options.AllowedHosts
	// (DNS-rebinding protection); loopback names are accepted on a
	// loopback listener, as here.
	h := streamhttp.NewHandler(s, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := httptest.NewServer(mux) // in production: an http.Server with timeouts
	defer hs.Close()
	defer h.Close()

	ctx := context.Background()
	for _, version := range []string{mcp.Version20260728, mcp.LatestLegacy} {
		c, err := client.Connect(ctx, streamable.New(hs.URL+"/mcp", nil), &client.Options{ProtocolVersion: version})
		if err != nil {
			log.Fatal(err)
		}
		out, _, err := client.CallTool[string](ctx, c, "greet", map[string]any{"name": "Ada"})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(c.Era(), out)
		c.Close()
	}
	// Output:
	// modern Hello, Ada!
	// legacy Hello, Ada!
}

// Letting a browser app on another origin call the endpoint: preflights
// from the listed origins are answered and the MCP response headers are
// exposed to the page (docs/design/cors.md). Other origins stay refused.
func ExampleOptions_cors() {
	s := server.New(nil)
	h := streamhttp.NewHandler(s, &streamhttp.Options{
		CORS: &streamhttp.CORSOptions{AllowedOrigins: []string{"https://app.example.com"}},
	})
	defer h.Shutdown(context.Background())
	r := httptest.NewRequest(http.MethodOptions, "http://localhost/mcp", nil)
	r.Header.Set("Origin", "https://app.example.com")
	r.Header.Set("Access-Control-Request-Method", "POST")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("Access-Control-Allow-Origin"))
	// Output: 204 https://app.example.com
}
