package client_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// clock is a settable time for a Cache.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// cacheServer serves the cacheable methods with the TTL and scope in
// hints (per method), counting what it served.
type cacheServer struct {
	mu    sync.Mutex
	hints map[string]struct {
		ttl   *int64
		scope mcp.CacheScope
	}
	served map[string]int
}

func newCacheServer() *cacheServer {
	return &cacheServer{hints: map[string]struct {
		ttl   *int64
		scope mcp.CacheScope
	}{}, served: map[string]int{}}
}

func (s *cacheServer) set(method string, ttlMs *int64, scope mcp.CacheScope) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hints[method] = struct {
		ttl   *int64
		scope mcp.CacheScope
	}{ttlMs, scope}
}

func (s *cacheServer) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served[method]
}

func (s *cacheServer) handle(ctx context.Context, msg *jsonrpc.Message) (any, error) {
	s.mu.Lock()
	s.served[msg.Method]++
	n := s.served[msg.Method]
	h, ok := s.hints[msg.Method]
	s.mu.Unlock()
	if !ok {
		h.ttl, h.scope = ttl(60_000), mcp.CachePrivate
	}
	var p struct {
		Cursor *string `json:"cursor"`
		URI    string  `json:"uri"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	name := msg.Method + "#" + string(rune('0'+n))
	switch msg.Method {
	case mcp.MethodToolsList:
		r := toolsResult(h.ttl, h.scope, mcp.Tool{Name: name, InputSchema: jsontext.Value(`{"type":"object"}`)})
		if p.Cursor == nil {
			next := "page2"
			r.NextCursor = &next
		}
		return r, nil
	case mcp.MethodPromptsList:
		return &mcp.ListPromptsResult{ResultType: mcp.ResultComplete, Prompts: []mcp.Prompt{{Name: name}}, TTLMs: h.ttl, CacheScope: h.scope}, nil
	case mcp.MethodResourcesList:
		return &mcp.ListResourcesResult{ResultType: mcp.ResultComplete, Resources: []mcp.Resource{{URI: "x://" + name, Name: name}}, TTLMs: h.ttl, CacheScope: h.scope}, nil
	case mcp.MethodResourcesTemplatesList:
		return &mcp.ListResourceTemplatesResult{ResultType: mcp.ResultComplete, ResourceTemplates: []mcp.ResourceTemplate{{URITemplate: "x://{id}", Name: name}}, TTLMs: h.ttl, CacheScope: h.scope}, nil
	case mcp.MethodResourcesRead:
		return &mcp.ReadResourceResult{ResultType: mcp.ResultComplete, Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{URI: p.URI, Text: name}}, TTLMs: h.ttl, CacheScope: h.scope}, nil
	}
	return nil, jsonrpc.ErrMethodNotFound
}

func firstTool(t testing.TB, c *client.Client, cursor *string) string {
	t.Helper()
	res, err := c.ListTools(testCtx(t), &mcp.ListToolsParams{Cursor: cursor})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools[0].Name
}

// TestCacheTTL: a result is fresh for its ttlMs, per page; absent,
// zero or negative ttlMs are not kept.
func TestCacheTTL(t *testing.T) {
	s := newCacheServer()
	tr, _ := startFake(t, s.handle)
	clk := &clock{now: time.Unix(1_000_000, 0)}
	// No wire check: this server sends invalid ttlMs on purpose.
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728, Cache: client.NewCache(clk.Now)})
	page2 := "page2"
	s.set(mcp.MethodToolsList, ttl(1000), mcp.CachePrivate)
	if got := firstTool(t, c, nil); got != "tools/list#1" {
		t.Fatalf("first page %q", got)
	}
	if got := firstTool(t, c, &page2); got != "tools/list#2" {
		t.Fatalf("second page %q", got)
	}
	clk.advance(999 * time.Millisecond)
	if firstTool(t, c, nil) != "tools/list#1" || firstTool(t, c, &page2) != "tools/list#2" || s.count(mcp.MethodToolsList) != 2 {
		t.Fatalf("pages were fetched again within their TTL (%d fetches)", s.count(mcp.MethodToolsList))
	}
	clk.advance(time.Millisecond)
	if got := firstTool(t, c, nil); got != "tools/list#3" {
		t.Errorf("after the TTL: %q, want a fresh page", got)
	}

	for _, tc := range []struct {
		name string
		ttl  *int64
	}{{"absent", nil}, {"zero", ttl(0)}, {"negative", ttl(-5)}} {
		s.set(mcp.MethodPromptsList, tc.ttl, mcp.CachePrivate)
		before := s.count(mcp.MethodPromptsList)
		for range 2 {
			if _, err := c.ListPrompts(testCtx(t), nil); err != nil {
				t.Fatal(err)
			}
		}
		if n := s.count(mcp.MethodPromptsList) - before; n != 2 {
			t.Errorf("ttlMs %s: %d fetches for 2 calls, want 2", tc.name, n)
		}
	}
}

// TestCacheMethods: every cacheable method is cached under its own key
// (resources/read per URI), and a read that is an MRTR retry is not.
func TestCacheMethods(t *testing.T) {
	s := newCacheServer()
	tr, _ := startFake(t, s.handle)
	c := connect(t, tr, &client.Options{ProtocolVersion: mcp.Version20260728})
	ctx := testCtx(t)
	for range 3 {
		if _, err := c.ListPrompts(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ListResources(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ListResourceTemplates(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for _, uri := range []string{"x://a", "x://b"} {
			res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Contents[0].(*mcp.TextResourceContents).URI; got != uri {
				t.Errorf("read %s got %s", uri, got)
			}
		}
	}
	for m, want := range map[string]int{mcp.MethodPromptsList: 1, mcp.MethodResourcesList: 1, mcp.MethodResourcesTemplatesList: 1, mcp.MethodResourcesRead: 2} {
		if n := s.count(m); n != want {
			t.Errorf("%s fetched %d times, want %d", m, n, want)
		}
	}
	// An MRTR retry (inputResponses / requestState) always goes out.
	if _, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: "x://a", RequestState: "s"}); err != nil {
		t.Fatal(err)
	}
	if n := s.count(mcp.MethodResourcesRead); n != 3 {
		t.Errorf("an MRTR retry was served from the cache (%d reads)", n)
	}

	nc := connect(t, mustFake(t, s), &client.Options{ProtocolVersion: mcp.Version20260728, NoCache: true})
	before := s.count(mcp.MethodPromptsList)
	for range 2 {
		if _, err := nc.ListPrompts(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.count(mcp.MethodPromptsList) - before; n != 2 {
		t.Errorf("NoCache: %d fetches for 2 calls", n)
	}
}

func mustFake(t testing.TB, s *cacheServer) *headerTap {
	tr, _ := startFake(t, s.handle)
	return &headerTap{Conn: tr}
}

// TestCacheInvalidation: a list_changed notification drops the pages of
// its list, and resources/updated the reads of its URI.
func TestCacheInvalidation(t *testing.T) {
	s := newCacheServer()
	tr, f := startFake(t, s.handle)
	changed := make(chan string, 8)
	c := connect(t, tr, &client.Options{
		ProtocolVersion:        mcp.Version20260728,
		OnToolsListChanged:     func(context.Context) { changed <- "tools" },
		OnResourcesListChanged: func(context.Context) { changed <- "resources" },
		OnResourceUpdated:      func(_ context.Context, uri string) { changed <- uri },
	})
	ctx := testCtx(t)
	page2 := "page2"
	firstTool(t, c, nil)
	firstTool(t, c, &page2)
	if _, err := c.ListPrompts(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"x://a", "x://b"} {
		if _, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.ListResourceTemplates(ctx, nil); err != nil {
		t.Fatal(err)
	}
	notify := func(method string, params any) {
		if err := f.conn.Notify(ctx, method, params); err != nil {
			t.Fatal(err)
		}
	}
	notify(mcp.NotificationToolsListChanged, nil)
	recv(t, changed, "OnToolsListChanged")
	if firstTool(t, c, nil) != "tools/list#3" || firstTool(t, c, &page2) != "tools/list#4" {
		t.Error("tools/list pages survived tools/list_changed")
	}
	if _, err := c.ListPrompts(ctx, nil); err != nil || s.count(mcp.MethodPromptsList) != 1 {
		t.Errorf("prompts/list was dropped by tools/list_changed (%d fetches)", s.count(mcp.MethodPromptsList))
	}
	notify(mcp.NotificationResourcesUpdated, &mcp.ResourceUpdatedNotificationParams{URI: "x://a"})
	if got := recv(t, changed, "OnResourceUpdated"); got != "x://a" {
		t.Errorf("updated %q", got)
	}
	for _, uri := range []string{"x://a", "x://b"} {
		if _, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.count(mcp.MethodResourcesRead); n != 3 {
		t.Errorf("%d reads, want 3 (x://a again, x://b from the cache)", n)
	}
	notify(mcp.NotificationResourcesListChanged, nil)
	recv(t, changed, "OnResourcesListChanged")
	if _, err := c.ListResourceTemplates(ctx, nil); err != nil || s.count(mcp.MethodResourcesTemplatesList) != 2 {
		t.Errorf("resources/list_changed kept the templates (%d fetches)", s.count(mcp.MethodResourcesTemplatesList))
	}
	if got := f.methods(); slices.Contains(got, mcp.MethodPing) {
		t.Errorf("requests %v", got)
	}
}

// TestCacheScope: clients sharing a Cache share the results the server
// marked public, never the private ones. The shared Cache is a zero value.
func TestCacheScope(t *testing.T) {
	s := newCacheServer()
	shared := new(client.Cache) // the zero value is usable
	tr1, _ := startFake(t, s.handle)
	tr2, _ := startFake(t, s.handle)
	c1 := connect(t, tr1, &client.Options{ProtocolVersion: mcp.Version20260728, Cache: shared})
	c2 := connect(t, tr2, &client.Options{ProtocolVersion: mcp.Version20260728, Cache: shared})
	ctx := testCtx(t)
	s.set(mcp.MethodPromptsList, ttl(60_000), mcp.CachePublic)
	s.set(mcp.MethodResourcesList, ttl(60_000), mcp.CachePrivate)
	for _, c := range []*client.Client{c1, c2, c1, c2} {
		if _, err := c.ListPrompts(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ListResources(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.count(mcp.MethodPromptsList); n != 1 {
		t.Errorf("public prompts/list fetched %d times by two clients, want 1", n)
	}
	if n := s.count(mcp.MethodResourcesList); n != 2 {
		t.Errorf("private resources/list fetched %d times by two clients, want 2 (one each)", n)
	}
	shared.Clear()
	if _, err := c1.ListPrompts(ctx, nil); err != nil || s.count(mcp.MethodPromptsList) != 2 {
		t.Errorf("Clear kept an entry")
	}
}
