package group_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/client/group"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport"
)

// fourServers is a group of a legacy server, a modern one, one whose era
// the client detects, and one that refuses every connection.
func fourServers(t *testing.T, opts *group.Options) (*group.Group, map[string]*host) {
	t.Helper()
	hosts := map[string]*host{}
	var servers []group.Server
	for _, s := range []struct{ name, version string }{
		{"legacy", mcp.LatestLegacy},
		{"modern", mcp.Version20260728},
		{"auto", ""},
		{"broken", ""},
	} {
		h := newHost(t, newServer(t, s.name))
		hosts[s.name] = h
		if s.name == "broken" {
			h.refuse.Store(true)
		}
		servers = append(servers, group.Server{Name: s.name, Connect: h.dial, Client: &client.Options{ProtocolVersion: s.version}})
	}
	g, err := group.Connect(testContext(t), servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g, hosts
}

func TestGroupBothEras(t *testing.T) {
	ctx := testContext(t)
	g, _ := fourServers(t, nil)

	want := map[string]struct {
		state group.State
		era   client.Era
	}{
		"legacy": {group.StateReady, client.EraLegacy},
		"modern": {group.StateReady, client.EraModern},
		"auto":   {group.StateReady, client.EraModern},
		"broken": {group.StateDown, 0},
	}
	for _, st := range g.Servers() {
		w := want[st.Name]
		if st.State != w.state || st.Era != w.era {
			t.Errorf("%s: state %s era %v, want %s %v", st.Name, st.State, st.Era, w.state, w.era)
		}
		if st.Name == "broken" && !errors.Is(st.Err, errRefused) {
			t.Errorf("broken: Err = %v, want the dial's error", st.Err)
		}
	}

	// Every server has a tool named echo: three tools, one per reachable
	// server, and the broken one's error, in the order given.
	var names []string
	var failed []string
	for tool, err := range g.Tools(ctx) {
		if err != nil {
			var se *group.ServerError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *ServerError", err)
			}
			failed = append(failed, se.Server)
			continue
		}
		if tool.Original != "echo" || tool.Name != tool.Server+"_echo" {
			t.Errorf("tool %+v: name %q original %q", tool.Server, tool.Name, tool.Original)
		}
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"legacy_echo", "modern_echo", "auto_echo"}) || !slices.Equal(failed, []string{"broken"}) {
		t.Fatalf("tools %v, failed %v", names, failed)
	}

	for _, name := range names {
		out, _, err := group.CallTool[echoOut](ctx, g, name, echoIn{Text: "hi"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if server, _, _ := g.Split(name); out.Server != server || out.Text != "hi" {
			t.Errorf("%s answered %+v", name, out)
		}
		res, err := g.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: []byte(`{"text":"raw"}`)})
		if err != nil || res.IsError {
			t.Fatalf("%s raw: %v %+v", name, err, res)
		}
	}

	for p, err := range g.Prompts(ctx) {
		if err != nil {
			continue
		}
		res, err := g.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Messages[0].Content.(*mcp.TextContent).Text; text != "hello from "+p.Server {
			t.Errorf("%s: %q", p.Name, text)
		}
	}

	// Completion is routed by the prompt's name or the template's URI.
	for _, ref := range []mcp.CompleteReference{
		{Type: mcp.RefPrompt, Name: "modern_greet"},
		{Type: mcp.RefResource, URI: "legacy_file:///{name}"},
	} {
		res, err := g.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteArgument{Name: "name", Value: "a"}})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{mcp.RefPrompt: "modern:greet", mcp.RefResource: "legacy:file:///{name}"}[ref.Type]
		if fmt.Sprint(res.Completion.Values) != "["+want+"]" {
			t.Errorf("complete %+v: %v, want %s", ref, res.Completion.Values, want)
		}
	}

	var uris []string
	for r, err := range g.Resources(ctx) {
		if err != nil {
			continue
		}
		uris = append(uris, r.URI)
		res, err := g.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Contents[0].(*mcp.TextResourceContents).Text; text != r.Server+":file:///a.txt" {
			t.Errorf("%s: %q", r.URI, text)
		}
	}
	if !slices.Equal(uris, []string{"legacy_file:///a.txt", "modern_file:///a.txt", "auto_file:///a.txt"}) {
		t.Errorf("resources %v", uris)
	}

	// A template expanded by the caller keeps its prefix and is routed.
	for tmpl, err := range g.ResourceTemplates(ctx) {
		if err != nil {
			continue
		}
		uri := strings.Replace(tmpl.URITemplate, "{name}", "b.txt", 1)
		res, err := g.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Contents[0].(*mcp.TextResourceContents).Text; text != tmpl.Server+":file:///b.txt" {
			t.Errorf("%s: %q", uri, text)
		}
	}
}

func TestGroupRoutingErrors(t *testing.T) {
	ctx := testContext(t)
	g, _ := fourServers(t, nil)
	for _, name := range []string{"echo", "nobody_echo", ""} {
		if _, err := g.CallTool(ctx, &mcp.CallToolParams{Name: name}); !errors.Is(err, group.ErrUnknownName) {
			t.Errorf("CallTool(%q) = %v, want ErrUnknownName", name, err)
		}
	}
	if _, err := g.CallTool(ctx, nil); !errors.Is(err, group.ErrUnknownName) {
		t.Errorf("CallTool(nil) = %v", err)
	}
	if _, err := g.GetPrompt(ctx, nil); !errors.Is(err, group.ErrUnknownName) {
		t.Errorf("GetPrompt(nil) = %v", err)
	}
	if _, err := g.ReadResource(ctx, nil); !errors.Is(err, group.ErrUnknownName) {
		t.Errorf("ReadResource(nil) = %v", err)
	}
	if _, err := g.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///a.txt"}); !errors.Is(err, group.ErrUnknownName) {
		t.Errorf("ReadResource of an unprefixed URI = %v", err)
	}
	// The broken server fails on its own; the others keep answering.
	_, err := g.CallTool(ctx, &mcp.CallToolParams{Name: "broken_echo"})
	var se *group.ServerError
	if !errors.As(err, &se) || se.Server != "broken" || !errors.Is(err, group.ErrServerDown) {
		t.Errorf("broken_echo: %v", err)
	}
	if _, _, err := group.CallTool[echoOut](ctx, g, "legacy_echo", echoIn{}); err != nil {
		t.Error(err)
	}
	// A tool the server does not have is that server's error.
	_, err = g.CallTool(ctx, &mcp.CallToolParams{Name: "modern_missing"})
	if !errors.As(err, &se) || se.Server != "modern" {
		t.Errorf("modern_missing: %v", err)
	}
}

func TestGroupConfigRefused(t *testing.T) {
	dial := newHost(t, newServer(t, "x")).dial
	for _, tc := range []struct {
		name    string
		sep     string
		servers []group.Server
		want    string
	}{
		{"no name", "", []group.Server{{Connect: dial}}, "no Name"},
		{"no connect", "", []group.Server{{Name: "a"}}, "no Connect"},
		{"same name", "", []group.Server{{Name: "a", Connect: dial}, {Name: "a", Prefix: "b", Connect: dial}}, "two servers"},
		{"same prefix", "", []group.Server{{Name: "a", Connect: dial}, {Name: "b", Prefix: "a", Connect: dial}}, "share the prefix"},
		{"separator inside", "", []group.Server{{Name: "my_server", Connect: dial}}, "contains the separator"},
		{"start of separator at the end", "__", []group.Server{{Name: "a_", Connect: dial}}, "ends with"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := group.Connect(testContext(t), tc.servers, &group.Options{Separator: tc.sep})
			if err == nil {
				_ = g.Close()
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// TestNamesCannotCollide tries every pair of prefixes from an alphabet
// rich in separator characters, and every separator of one or two of
// them: whenever Connect accepts two prefixes, no two (server, name)
// pairs spell the same namespaced name, and Split recovers each.
func TestNamesCannotCollide(t *testing.T) {
	words := []string{"a", "b", "_", "a_", "_a", "a__", "a_b", "ab", "__", "a.", ".a", "a._"}
	originals := []string{"", "x", "_", "__x", "_x", "x_", ".", "a_b", "._"}
	dial := func(context.Context) (transport.Conn, error) { return nil, errRefused } // names need no server
	accepted := 0
	for _, sep := range []string{"_", "__", ".", "._", "_."} {
		for _, p1 := range words {
			for _, p2 := range words {
				if p1 == p2 {
					continue
				}
				servers := []group.Server{{Name: "one", Prefix: p1, Connect: dial}, {Name: "two", Prefix: p2, Connect: dial}}
				g, err := group.Connect(context.Background(), servers, &group.Options{Separator: sep})
				if err != nil {
					continue
				}
				accepted++
				seen := map[string]string{}
				for _, server := range []string{"one", "two"} {
					for _, orig := range originals {
						name, err := g.Name(server, orig)
						if err != nil {
							t.Fatal(err)
						}
						if prev, dup := seen[name]; dup {
							t.Errorf("sep %q prefixes %q %q: %s/%q and %s spell %q", sep, p1, p2, server, orig, prev, name)
						}
						seen[name] = server + "/" + orig
						if s, o, ok := g.Split(name); !ok || s != server || o != orig {
							t.Errorf("sep %q: Split(%q) = %q %q %v, want %s %q", sep, name, s, o, ok, server, orig)
						}
					}
				}
				_ = g.Close()
			}
		}
	}
	if accepted < 20 {
		t.Fatalf("only %d configurations accepted: the test proves little", accepted)
	}
}

func TestGroupListChanged(t *testing.T) {
	ctx := testContext(t)
	changes := make(chan group.Change, 16)
	own := make(chan struct{}, 16)
	hosts := map[string]*host{}
	var servers []group.Server
	for _, s := range []struct{ name, version string }{{"legacy", mcp.LatestLegacy}, {"modern", mcp.Version20260728}} {
		h := newHost(t, newServer(t, s.name))
		hosts[s.name] = h
		servers = append(servers, group.Server{Name: s.name, Connect: h.dial, Client: &client.Options{
			ProtocolVersion:    s.version,
			OnToolsListChanged: func(context.Context) { own <- struct{}{} },
		}})
	}
	g, err := group.Connect(ctx, servers, &group.Options{OnListChanged: func(_ context.Context, ch group.Change) { changes <- ch }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	// A round trip first: a legacy server hears of a change only once it
	// has handled notifications/initialized, which Connect does not wait for.
	for _, err := range g.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"legacy", "modern"} {
		err := server.AddTool(hosts[name].srv, &mcp.Tool{Name: "added"}, func(context.Context, *server.CallToolRequest, echoIn) (echoOut, error) {
			return echoOut{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case ch := <-changes:
			if ch != (group.Change{Server: name, Kind: group.KindTools}) {
				t.Errorf("change %+v, want %s tools", ch, name)
			}
		case <-ctx.Done():
			t.Fatalf("%s: no list change", name)
		}
		select {
		case <-own:
		case <-ctx.Done():
			t.Fatalf("%s: the server's own handler did not run", name)
		}
	}
	var names []string
	for tool, err := range g.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	if !slices.Equal(names, []string{"legacy_added", "legacy_echo", "modern_added", "modern_echo"}) {
		t.Errorf("tools after the change: %v", names)
	}
}
