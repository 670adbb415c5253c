package redisstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/ratelimit"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/store"
	"github.com/mcpkit/mcpkit/store/redis/internal/redistest"
)

// roundTripCeilings holds, like the allocation ceilings of testing.AllocsPerRun,
// the most Redis round trips (and commands) each operation may cost, all
// instances together. A change that adds one fails TestRoundTrips; a change
// that saves one lowers the figure here (and in bench/README.md, "Redis round
// trips").
var roundTripCeilings = []struct {
	op          string
	trips, cmds int
	what        string // what the round trips are
}{
	{"call-held", 0, 0, "none: the instance's copy, kept right by the broker, read again only once a SessionCheckInterval"},
	{"call-held-recheck", 1, 1, "GETEX, once a SessionCheckInterval: the session still exists, its latest state, its TTL restarted"},
	{"call-loaded", 2, 2, "GETEX, then GETEX again once the copy is made (a change broadcast meanwhile)"},
	{"resume", 3, 3, "session from the copy (no GETEX); PUBLISH attach to the owner, PUBLISH its answer (gone); EVALSHA(load): events, marker, key set"},
	{"broadcast", 4, 4, "PUBLISH change; one EVALSHA(append) per instance, the notification on its GET stream"},
	{"task-create", 1, 4, "session from the copy; one pipeline: SET record, ZADD, EXPIRE NX, EXPIRE GT index"},
	{"task-status", 1, 1, "session from the copy; GET record"},
	{"task-result", 2, 2, "session from the copy; GET record (lookup: working); EVALSHA(cas): the settle, on the bytes the owner wrote (no GET), and in the same script the peers' broadcast, which also carries the session's status notification to the instance holding its stream (no PUBLISH of its own); the outcome as settled (no GET after the wait)"},
	{"task-status-settled", 0, 0, "none: the owner answers from the terminal record it settled (server.Options.SettledTasks)"},
	{"task-status-elsewhere", 1, 1, "none when the owner's broadcast of the settle (carrying the small terminal record) came first; else GET record, kept"},
	{"task-result-settled", 0, 0, "none: the terminal record that instance holds (final: never read again)"},
	{"task-expiry", 1, 1, "GET: Redis drops the record itself; a read past the TTL finds it expired"},
	{"ratelimit", 1, 1, "EVALSHA(take): the token bucket script"},
	{"dpop", 1, 1, "SET NX PX"},
}

// TestRoundTrips counts the Redis commands of each operation of a
// deployment on Redis (a hook on the client all instances share) and fails
// when one costs more round trips or commands than its ceiling. Every
// operation is measured warm (its scripts loaded), after the requests
// before it have been answered in full, so the counts are exact.
func TestRoundTrips(t *testing.T) {
	redistest.Need(t)
	got := measureRoundTrips(t)
	for _, c := range roundTripCeilings {
		m, ok := got[c.op]
		if !ok {
			t.Errorf("%s: not measured", c.op)
			continue
		}
		t.Logf("%-20s %2d round trips, %2d commands: %s", c.op, m.trips, len(m.cmds), strings.Join(m.cmds, " "))
		if m.trips > c.trips || len(m.cmds) > c.cmds {
			t.Errorf("%s: %d round trips, %d commands (%s); ceiling %d, %d",
				c.op, m.trips, len(m.cmds), strings.Join(m.cmds, " "), c.trips, c.cmds)
		}
	}
}

type tripCount struct {
	trips int
	cmds  []string
}

var taskIDRE = regexp.MustCompile(`"taskId":"([^"]+)"`)

func measureRoundTrips(t *testing.T) map[string]tripCount {
	ctx := context.Background()
	p := prefix(t)
	var c tripCounter
	cl := countingClient(t, &c)
	in := newRTInstances(t, cl, p, 3)
	for _, sc := range scriptNames { // warm: no NOSCRIPT-then-EVAL counted
		if err := sc.Load(ctx, cl).Err(); err != nil {
			t.Fatal(err)
		}
	}
	a, b := in.urls[0], in.urls[1]
	got := map[string]tripCount{}
	record := func(op string) {
		trips, cmds := c.take()
		got[op] = tripCount{trips, cmds}
	}
	post := func(url, sid, body string) string {
		t.Helper()
		resp, out := rtDo(t, http.MethodPost, url, sid, body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s %s", body, resp.Status, out)
		}
		return out
	}
	const echo = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`

	// A sessionful tools/call on the instance that holds the session.
	sid := rtSession(t, a)
	post(a, sid, echo) // warm
	c.reset()
	if out := post(a, sid, echo); !strings.Contains(out, `"text":"hi"`) {
		t.Fatalf("call: %s", out)
	}
	record("call-held")

	// The same once SessionCheckInterval has passed: the copy is read
	// again (and the session's TTL restarted), once.
	in.clock.advance(streamhttp.DefaultSessionCheckInterval)
	c.reset()
	if out := post(a, sid, echo); !strings.Contains(out, `"text":"hi"`) {
		t.Fatalf("call: %s", out)
	}
	record("call-held-recheck")

	// The same on an instance that has no copy of the session yet.
	c.reset()
	if out := post(b, sid, echo); !strings.Contains(out, `"text":"hi"`) {
		t.Fatalf("call on B: %s", out)
	}
	record("call-loaded")

	// A stream produced on A (a log line, then the result) resumed on B
	// after its first event.
	post(a, sid, `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}`)
	out := post(a, sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"log"}}`)
	first := regexp.MustCompile(`(?m)^id: ?(\S+)\ndata: ?\S`).FindStringSubmatch(out)
	if first == nil || !strings.Contains(out, "a line") {
		t.Fatalf("no event id in A's stream: %q", out)
	}
	post(b, sid, echo) // B's copy takes the new log level first
	c.reset()
	resp, out := rtDo(t, http.MethodGet, b, sid, "", "Last-Event-ID", first[1])
	if resp.StatusCode != http.StatusOK || !strings.Contains(out, `"id":4`) || strings.Contains(out, "a line") {
		t.Fatalf("resume on B: %s %q", resp.Status, out)
	}
	record("resume")

	// A list change on A reaches every instance, each of which tells the
	// session it holds on its open GET stream.
	var streams []*bufio.Reader
	for _, u := range in.urls {
		s := rtSession(t, u)
		resp := rtOpen(t, http.MethodGet, u, s, "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: %s", resp.Status)
		}
		t.Cleanup(func() { resp.Body.Close() })
		streams = append(streams, bufio.NewReader(resp.Body))
	}
	c.reset()
	server.AddTool(in.servers[0], &mcp.Tool{Name: "added"}, func(context.Context, *server.CallToolRequest, struct{}) (string, error) { return "", nil })
	for _, r := range streams {
		waitLine(t, r, "notifications/tools/list_changed")
	}
	record("broadcast")

	// A task's life on the instance that holds the session: created (its
	// handler waits), its status read, its result fetched once done.
	tsid := rtSession(t, a)
	c.reset()
	out = post(a, tsid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait","task":{"ttl":60000}}}`)
	m := taskIDRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no task: %s", out)
	}
	record("task-create")
	if out := post(a, tsid, fmt.Sprintf(`{"jsonrpc":"2.0","id":6,"method":"tasks/get","params":{"taskId":%q}}`, m[1])); !strings.Contains(out, `"working"`) {
		t.Fatalf("tasks/get: %s", out)
	}
	record("task-status")
	// tasks/result finds the task working (its lookup's GET answered
	// before the handler is released), waits, and answers the outcome.
	looked := c.afterGet()
	result := make(chan string, 1)
	go func() {
		out, err := rtPlain(a, tsid, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tasks/result","params":{"taskId":%q}}`, m[1]))
		if err != nil {
			out = err.Error()
		}
		result <- out
	}()
	<-looked
	close(in.release)
	if out := <-result; !strings.Contains(out, `"text":"done"`) {
		t.Fatalf("tasks/result: %s", out)
	}
	record("task-result")
	// The settled task's status on its owner: the record it settled.
	if out := post(a, tsid, fmt.Sprintf(`{"jsonrpc":"2.0","id":10,"method":"tasks/get","params":{"taskId":%q}}`, m[1])); !strings.Contains(out, `"completed"`) {
		t.Fatalf("tasks/get of the settled task: %s", out)
	}
	record("task-status-settled")
	// The task read on another instance (round robin), which never saw
	// it: once from the store, then from the final record it read.
	post(b, tsid, `{"jsonrpc":"2.0","id":11,"method":"ping"}`) // B's copy of the session
	c.reset()
	if out := post(b, tsid, fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":%q}}`, m[1])); !strings.Contains(out, `"completed"`) {
		t.Fatalf("tasks/get on B: %s", out)
	}
	record("task-status-elsewhere")
	if out := post(b, tsid, fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tasks/result","params":{"taskId":%q}}`, m[1])); !strings.Contains(out, `"text":"done"`) {
		t.Fatalf("tasks/result on B: %s", out)
	}
	record("task-result-settled")

	// Expiry: Redis drops the record by itself; a read past the TTL on
	// the store's clock costs one GET.
	now := time.Now()
	ts := NewTaskStore(cl, &TaskStoreOptions{Prefix: p + "x:", Now: func() time.Time { return now }})
	if err := ts.Put(ctx, &store.TaskRecord{ID: "e", SessionID: "s", Status: mcp.TaskCompleted, CreatedAt: now, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	c.reset()
	if _, err := ts.Get(ctx, "e"); !errors.Is(err, store.ErrTaskNotFound) {
		t.Fatalf("Get past the TTL: %v", err)
	}
	record("task-expiry")

	// A rate-limit check (the bucket script), warm.
	lim := NewRateLimiter(cl, &RateLimiterOptions{Prefix: p})
	rate := ratelimit.Rate{Limit: 100, Burst: 10}
	if _, err := lim.Take(ctx, "k", rate); err != nil {
		t.Fatal(err)
	}
	c.reset()
	if _, err := lim.Take(ctx, "k", rate); err != nil {
		t.Fatal(err)
	}
	record("ratelimit")

	// A DPoP replay check.
	rc := NewReplayCache(cl, p+"dpop:")
	c.reset()
	if seen, err := rc.Seen(ctx, "proof", time.Now().Add(time.Minute)); err != nil || seen {
		t.Fatalf("Seen: %v, %v", seen, err)
	}
	record("dpop")
	return got
}

// TestTripCounter checks the instrument: a command is one round trip, a
// pipeline one round trip of all its commands, and connection set-up is
// not counted.
func TestTripCounter(t *testing.T) {
	redistest.Need(t)
	ctx := context.Background()
	p := prefix(t)
	var c tripCounter
	cl := countingClient(t, &c) // its first command dials (HELLO, CLIENT SETINFO)
	cl.Get(ctx, p+"a")
	if trips, cmds := c.take(); trips != 1 || strings.Join(cmds, " ") != "GET" {
		t.Fatalf("one GET: %d round trips, %q", trips, cmds)
	}
	_, err := cl.Pipelined(ctx, func(pl redis.Pipeliner) error {
		pl.Set(ctx, p+"a", "1", time.Minute)
		pl.Incr(ctx, p+"b")
		pl.Expire(ctx, p+"b", time.Minute)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if trips, cmds := c.take(); trips != 1 || strings.Join(cmds, " ") != "SET INCR EXPIRE" {
		t.Fatalf("a pipeline of three: %d round trips, %q", trips, cmds)
	}
}
