package apps_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/memory"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

const viewURI = "ui://weather/dashboard"

const viewHTML = `<!DOCTYPE html><html><body><div id="w"></div></body></html>`

type weatherOut struct {
	City     string `json:"city"`
	Rendered bool   `json:"rendered"` // the client renders views
}

func newServer(t testing.TB) *server.Server {
	s := server.New(nil)
	border := true
	err := apps.AddResource(s, &apps.Resource{
		URI: viewURI, Name: "dashboard", Description: "Weather dashboard", HTML: viewHTML,
		Meta: apps.ResourceMeta{
			CSP:           &apps.CSP{ConnectDomains: []string{"https://api.example.com"}},
			Permissions:   &apps.Permissions{Geolocation: true},
			PrefersBorder: &border,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tool := &mcp.Tool{Name: "weather", Meta: mcp.Meta{"com.example/keep": "yes"}}
	if err := apps.Link(tool, viewURI); err != nil {
		t.Fatal(err)
	}
	err = server.AddTool(s, tool, func(_ context.Context, req *server.CallToolRequest, in struct {
		City string `json:"city"`
	}) (weatherOut, error) {
		return weatherOut{City: in.City, Rendered: apps.ClientSupports(req.Request)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	refresh := &mcp.Tool{Name: "refresh"}
	if err := apps.Link(refresh, viewURI, apps.VisibleToApp); err != nil {
		t.Fatal(err)
	}
	if err := server.AddTool(s, refresh, func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "ok", nil }); err != nil {
		t.Fatal(err)
	}
	return s
}

func dial(t testing.TB, carrier string, s *server.Server) transport.Conn {
	if carrier == "memory" {
		a, b := memory.NewPair()
		ss := s.Connect(b)
		t.Cleanup(func() { ss.Close() })
		return a
	}
	h := streamhttp.NewHandler(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	return streamable.New(ts.URL, nil)
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestApps(t *testing.T) {
	for _, era := range []string{mcp.LatestLegacy, mcp.Version20260728} {
		for _, carrier := range []string{"memory", "http"} {
			t.Run(era+"/"+carrier, func(t *testing.T) {
				t.Parallel()
				s := newServer(t)
				opts := &client.Options{ProtocolVersion: era}
				apps.Declare(opts)
				c, err := client.Connect(testCtx(t), dial(t, carrier, s), opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				ctx := testCtx(t)
				if c.Era() == client.EraModern {
					if _, err := c.Discover(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if !apps.Supported(c) {
					t.Fatal("the server does not advertise the extension")
				}
				tools, err := c.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				i := slices.IndexFunc(tools.Tools, func(tl mcp.Tool) bool { return tl.Name == "weather" })
				weather := &tools.Tools[i]
				tm, ok := apps.ToolUI(weather)
				if !ok || tm.ResourceURI != viewURI || !tm.VisibleTo(apps.VisibleToModel) {
					t.Fatalf("ToolUI(weather) = %+v, %v", tm, ok)
				}
				var keep string
				if ok, _ := weather.Meta.Get("com.example/keep", &keep); !ok || keep != "yes" {
					t.Error("Link dropped the tool's other _meta")
				}
				i = slices.IndexFunc(tools.Tools, func(tl mcp.Tool) bool { return tl.Name == "refresh" })
				if tm, ok := apps.ToolUI(&tools.Tools[i]); !ok || tm.VisibleTo(apps.VisibleToModel) || !tm.VisibleTo(apps.VisibleToApp) {
					t.Fatalf("ToolUI(refresh) = %+v, %v: want app-only", tm, ok)
				}

				ui, err := apps.FetchUI(ctx, c, weather)
				if err != nil {
					t.Fatal(err)
				}
				if ui.HTML != viewHTML || ui.URI != viewURI {
					t.Fatalf("view %+v", ui)
				}
				if ui.Meta.CSP == nil || !slices.Equal(ui.Meta.CSP.ConnectDomains, []string{"https://api.example.com"}) ||
					ui.Meta.Permissions == nil || *ui.Meta.Permissions != (apps.Permissions{Geolocation: true}) ||
					ui.Meta.PrefersBorder == nil || !*ui.Meta.PrefersBorder {
					t.Fatalf("view meta %+v", ui.Meta)
				}

				// The list entry: the MIME type and _meta.ui, permissions
				// as empty objects.
				list, err := c.ListResources(ctx, nil)
				if err != nil || len(list.Resources) != 1 {
					t.Fatalf("resources %+v %v", list, err)
				}
				entry, _ := json.Marshal(list.Resources[0])
				for _, want := range []string{`"mimeType":"text/html;profile=mcp-app"`, `"permissions":{"geolocation":{}}`, `"connectDomains":["https://api.example.com"]`} {
					if !strings.Contains(string(entry), want) {
						t.Errorf("list entry %s lacks %s", entry, want)
					}
				}

				res, _, err := client.CallTool[weatherOut](ctx, c, "weather", map[string]string{"city": "Oslo"})
				if err != nil || res != (weatherOut{City: "Oslo", Rendered: true}) {
					t.Fatalf("weather = %+v, %v", res, err)
				}

				// A client that does not declare the extension gets the
				// text fallback.
				plain, err := client.Connect(testCtx(t), dial(t, carrier, s), &client.Options{ProtocolVersion: era})
				if err != nil {
					t.Fatal(err)
				}
				defer plain.Close()
				res, _, err = client.CallTool[weatherOut](ctx, plain, "weather", map[string]string{"city": "Oslo"})
				if err != nil || res.Rendered {
					t.Fatalf("weather without the extension = %+v, %v", res, err)
				}
				if _, err := apps.FetchUI(ctx, c, &mcp.Tool{Name: "plain"}); !errors.Is(err, apps.ErrNoUI) {
					t.Fatalf("FetchUI of a tool without a view: %v", err)
				}
			})
		}
	}
}

func TestRegistrationErrors(t *testing.T) {
	s := server.New(nil)
	for _, r := range []*apps.Resource{
		nil,
		{URI: "https://x/y", Name: "n", HTML: "<html>"},
		{URI: "ui://", Name: "n", HTML: "<html>"},
		{URI: "ui://x", HTML: "<html>"},
		{URI: "ui://x", Name: "n"},
	} {
		if err := apps.AddResource(s, r); err == nil || !strings.HasPrefix(err.Error(), "apps: ") {
			t.Errorf("AddResource(%+v) = %v", r, err)
		}
	}
	if _, ok := s.Capabilities().Extensions[apps.ExtensionID]; ok {
		t.Error("a failed registration advertised the extension")
	}
	if err := apps.Link(&mcp.Tool{Name: "t"}, "https://x"); err == nil {
		t.Error("Link to a non-ui URI succeeded")
	}
	if err := apps.Link(&mcp.Tool{Name: "t"}, "ui://x", "everyone"); err == nil {
		t.Error("Link with an unknown visibility succeeded")
	}
	if _, ok := apps.ToolUI(&mcp.Tool{Meta: mcp.Meta{"ui/resourceUri": "ui://old"}}); !ok {
		t.Error("ToolUI ignores the deprecated flat key")
	}
}
