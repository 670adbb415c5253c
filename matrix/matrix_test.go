package matrix

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The capability axis, in the order of the table's columns.
const (
	capToolTyped        = "tool-typed"
	capToolRaw          = "tool-raw"
	capProgress         = "progress"
	capLogging          = "logging"
	capCancel           = "cancel"
	capElicitForm       = "elicit-form"
	capElicitURL        = "elicit-url"
	capSampling         = "sampling"
	capRoots            = "roots"
	capResourceRead     = "resource-read"
	capResourceTemplate = "resource-template"
	capSubscribe        = "resource-subscribe"
	capPrompt           = "prompt"
	capCompletion       = "completion"
	capListChanged      = "list-changed"
	capMRTR             = "mrtr"
	capTasks            = "tasks"
	capTaskProgress     = "task-progress"
	capExtension        = "extension"
	capRestart          = "restart-mid-call"
	capApps             = "apps"
)

// capabilities and their column headings.
var capabilities = []struct{ Name, Short string }{
	{capToolTyped, "typed"}, {capToolRaw, "raw"}, {capProgress, "prog"}, {capLogging, "log"},
	{capCancel, "canc"}, {capElicitForm, "form"}, {capElicitURL, "url"}, {capSampling, "samp"},
	{capRoots, "root"}, {capResourceRead, "read"}, {capResourceTemplate, "tmpl"}, {capSubscribe, "subs"},
	{capPrompt, "prmt"}, {capCompletion, "comp"}, {capListChanged, "list"}, {capMRTR, "mrtr"},
	{capTasks, "task"}, {capTaskProgress, "tprog"}, {capExtension, "ext"}, {capApps, "apps"}, {capRestart, "rstrt"},
}

// A cell is one combination of the axes.
type cell struct {
	Client  string
	Topo    topology
	Era     era
	Carrier carrier
	Cap     string
}

// Name is the cell's name in the table, the known-failures list and
// `go test -run` (each axis one path element).
func (c cell) Name() string {
	return strings.Join([]string{c.Client, c.Topo.Name, c.Era.Name, string(c.Carrier), c.Cap}, "/")
}

func (c cell) row() string {
	return strings.Join([]string{c.Client, c.Topo.Name, c.Era.Name, string(c.Carrier)}, " ")
}

// serverRequests are the capabilities that need the server to send the
// client a request (directly, or through the legacy shim).
var serverRequests = []string{capElicitForm, capElicitURL, capSampling, capRoots, capMRTR, capTasks, capTaskProgress}

// A rule excludes the cells it applies to, with its reason. Every excluded
// cell is printed with its rule.
type rule struct {
	Name    string
	Reason  string
	Applies func(c cell) bool
}

// pairRule is a rule about an era and a carrier, applied to the client's
// side and to the gateway's upstream alike.
func pairInvalid(e era, c carrier) bool {
	return (e.modern() && c == sse2024) || (e.Stateless && (c == stdioT || c == sse2024))
}

var rules = []rule{
	{
		Name:    "sse-2024-legacy-only",
		Reason:  "the 2024-11-05 HTTP+SSE transport carries the legacy era only: a 2026-07-28 request has no way on it",
		Applies: func(c cell) bool { return c.Era.modern() && c.Carrier == sse2024 },
	},
	{
		Name:    "sessionless-is-streamable",
		Reason:  "a stdio connection and an HTTP+SSE stream are a session by construction: only Streamable HTTP serves 2025-11-25 without one",
		Applies: func(c cell) bool { return c.Era.Stateless && (c.Carrier == stdioT || c.Carrier == sse2024) },
	},
	{
		Name:    "upstream-pair",
		Reason:  "the gateway's upstream cannot be reached in that era over that carrier (the two rules above)",
		Applies: func(c cell) bool { return c.Topo.Gateway && pairInvalid(c.Topo.UpEra, c.Topo.UpCarr) },
	},
	{
		Name:   "no-session-no-server-requests",
		Reason: "2025-11-25 without a session: the server cannot send the client a request (elicitation, sampling, roots, and the legacy shim's rounds)",
		Applies: func(c cell) bool {
			return (c.Era.Stateless || (c.Topo.Gateway && c.Topo.UpEra.Stateless)) && slices.Contains(serverRequests, c.Cap)
		},
	},
	{
		Name:   "no-session-no-notifications",
		Reason: "2025-11-25 without a session: nothing reaches the client outside a request (no standalone stream), so no list changes or resource updates",
		Applies: func(c cell) bool {
			return (c.Era.Stateless || (c.Topo.Gateway && c.Topo.UpEra.Stateless)) && (c.Cap == capListChanged || c.Cap == capSubscribe)
		},
	},
}

func init() {
	rules = append(rules,
		rule{
			Name: "task-progress-channel",
			Reason: "a task's progress has a channel only on a legacy connection that outlives the request (stdio, HTTP+SSE): " +
				"a 2026-07-28 task and a 2025-11-25 task over Streamable HTTP drop it (docs/design/tasks.md, Limits), " +
				"and the gateway runs a 2026-07-28 upstream's task as such",
			Applies: func(c cell) bool {
				return c.Cap == capTaskProgress && (c.Era.modern() || c.Carrier == httpJSON || c.Carrier == httpSSE ||
					(c.Topo.Gateway && c.Topo.UpEra.modern()))
			},
		},
		rule{
			Name:    "restart-needs-a-cluster",
			Reason:  "an instance restarted mid-call is a cell of the cluster topology only: elsewhere there is no other instance to go on",
			Applies: func(c cell) bool { return c.Cap == capRestart && !c.Topo.Cluster },
		},
		rule{
			Name: "cluster-is-sessions-over-http",
			Reason: "the cluster shares legacy sessions and 2026-07-28 calls over Streamable HTTP: 2024-11-05 sessions are not shared " +
				"(docs/design/legacy-sse.md), stdio has one process, a session-less request has nothing to share, and its one handler answers JSON when it can",
			Applies: func(c cell) bool { return c.Topo.Cluster && (c.Carrier != httpJSON || c.Era.Stateless) },
		},
		rule{
			Name:    "gateway-no-extensions",
			Reason:  "the gateway forwards MCP methods and the MCP Apps extension only: other extensions are neither advertised nor forwarded (docs/design/gateway.md)",
			Applies: func(c cell) bool { return c.Topo.Gateway && c.Cap == capExtension },
		},
	)
}

func excludedBy(c cell) *rule {
	for i := range rules {
		if rules[i].Applies(c) {
			return &rules[i]
		}
	}
	return nil
}

// topologies: direct, and the gateway with its upstream in every era and
// carrier.
func topologies() []topology {
	out := []topology{direct, clusterTopology}
	for _, e := range eras {
		for _, c := range carriers {
			out = append(out, gatewayTopology(e, c))
		}
	}
	return out
}

// clients are the client axis: each runs the capabilities it has a check
// for.
var clients = []struct {
	Name string
	Has  func(capName string) bool
	Run  func(ctx context.Context, b *built, c cell, id string) error
}{
	{"mcpkit", func(n string) bool { _, ok := mcpkitChecks[n]; return ok }, runMcpkit},
	{"go-sdk", func(n string) bool { _, ok := gosdkChecks[n]; return ok }, runGosdk},
}

func cells() []cell {
	var out []cell
	for _, cl := range clients {
		for _, tp := range topologies() {
			for _, e := range eras {
				for _, cr := range carriers {
					for _, cp := range capabilities {
						if cl.Has(cp.Name) {
							out = append(out, cell{Client: cl.Name, Topo: tp, Era: e, Carrier: cr, Cap: cp.Name})
						}
					}
				}
			}
		}
	}
	return out
}

// The known failures: real defects the matrix found and nobody has fixed
// yet, one per line as "<cell pattern> <reason>" (path.Match patterns, one
// axis per element). A listed cell that fails is reported, not failed; a
// listed cell that passes fails the run, so that the list shrinks with
// the fixes. Everything on it is printed with the table.
const knownFile = "testdata/known-failures.txt"

type known struct {
	Pattern, Reason string
	// Timing: the defect shows only under some interleavings (marked
	// with a leading ~): the cell may pass, and passing is not an error.
	Timing bool
	used   bool
}

func loadKnown(t *testing.T) []*known {
	f, err := os.Open(knownFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*known
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		timing := strings.HasPrefix(line, "~")
		pat, reason, _ := strings.Cut(strings.TrimPrefix(line, "~"), " ")
		if _, err := path.Match(pat, ""); err != nil {
			t.Fatalf("%s: bad pattern %q: %v", knownFile, pat, err)
		}
		out = append(out, &known{Pattern: pat, Reason: strings.TrimSpace(reason), Timing: timing})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func knownFor(list []*known, name string) *known {
	for _, k := range list {
		if ok, _ := path.Match(k.Pattern, name); ok {
			return k
		}
	}
	return nil
}

type outcome int

const (
	passed outcome = iota
	failed
	knownFailure
	excluded
)

type result struct {
	cell    cell
	outcome outcome
	detail  string // the error, the rule or the known failure's reason
	took    time.Duration
}

func TestMain(m *testing.M) {
	flag.Parse()
	// The cells wait on I/O, not on the CPU: run many at once unless the
	// caller chose.
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "24")
	}
	os.Exit(m.Run())
}

func TestMatrix(t *testing.T) {
	all := cells()
	knowns := loadKnown(t)
	results := make([]result, len(all))
	var mu sync.Mutex
	byTopo := map[string][]int{}
	for i, c := range all {
		byTopo[c.Topo.Name] = append(byTopo[c.Topo.Name], i)
	}
	start := time.Now()
	t.Run("cells", func(t *testing.T) {
		for _, tp := range topologies() {
			idx := byTopo[tp.Name]
			// Excluded cells are recorded without building anything.
			var live []int
			for _, i := range idx {
				if r := excludedBy(all[i]); r != nil {
					results[i] = result{cell: all[i], outcome: excluded, detail: r.Name}
					continue
				}
				live = append(live, i)
			}
			if len(live) == 0 {
				continue
			}
			t.Run(tp.Name, func(t *testing.T) {
				t.Parallel()
				var subs []string
				for _, i := range live {
					if all[i].Cap == capSubscribe {
						subs = append(subs, cellID(i))
					}
				}
				b, err := build(t, tp, subs)
				if errors.Is(err, errNoRedis) && os.Getenv("MCPKIT_REQUIRE_REDIS") != "1" {
					t.Skip(err)
				}
				if err != nil {
					t.Fatalf("building %s: %v", tp.Name, err)
				}
				for _, i := range live {
					c := all[i]
					sub := strings.Join([]string{c.Client, c.Era.Name, string(c.Carrier), c.Cap}, "/")
					t.Run(sub, func(t *testing.T) {
						t.Parallel()
						ctx, cancel := context.WithTimeout(t.Context(), 2*hangGuard)
						defer cancel()
						began := time.Now()
						err := clientRun(c.Client)(ctx, b, c, cellID(i))
						r := result{cell: c, outcome: passed, took: time.Since(began)}
						k := knownFor(knowns, c.Name())
						switch {
						case err != nil && k != nil:
							r.outcome, r.detail = knownFailure, k.Reason+" (now: "+err.Error()+")"
							t.Logf("known failure: %v", err)
						case err != nil:
							r.outcome, r.detail = failed, err.Error()
							t.Errorf("%s: %v", c.Name(), err)
						case k != nil && !k.Timing:
							r.outcome, r.detail = failed, "listed as a known failure but passed: remove it from "+knownFile
							t.Errorf("%s: %s", c.Name(), r.detail)
						}
						mu.Lock()
						if k != nil {
							k.used = true
						}
						results[i] = r
						mu.Unlock()
					})
				}
			})
		}
	})
	// A pattern that matches no cell that ran is stale.
	if !flagRunFiltered() {
		for _, k := range knowns {
			if !k.used {
				t.Errorf("%s: %q matches no cell that ran: remove it", knownFile, k.Pattern)
			}
		}
	}
	printTable(os.Stdout, results, knowns, time.Since(start))
}

// flagRunFiltered reports whether -run selects part of the matrix, in
// which case stale known failures cannot be told.
func flagRunFiltered() bool {
	f := flag.Lookup("test.run")
	return f != nil && f.Value.String() != "" && f.Value.String() != "^TestMatrix$"
}

func cellID(i int) string { return fmt.Sprintf("c%d", i) }

func clientRun(name string) func(ctx context.Context, b *built, c cell, id string) error {
	for _, cl := range clients {
		if cl.Name == name {
			return cl.Run
		}
	}
	panic("unknown client " + name)
}

// printTable prints one row per client, topology, era and carrier, one
// column per capability, then the rules, the known failures and the
// failures.
func printTable(w io.Writer, results []result, knowns []*known, took time.Duration) {
	type row struct {
		name  string
		marks map[string]string
	}
	var rows []*row
	byName := map[string]*row{}
	counts := map[outcome]int{}
	ruleCount := map[string]int{}
	ruleLetter := map[string]string{}
	for i, r := range rules {
		ruleLetter[r.Name] = string(rune('a' + i))
	}
	for _, r := range results {
		if r.cell.Client == "" {
			continue // not run (filtered out)
		}
		counts[r.outcome]++
		rw := byName[r.cell.row()]
		if rw == nil {
			rw = &row{name: r.cell.row(), marks: map[string]string{}}
			byName[rw.name] = rw
			rows = append(rows, rw)
		}
		switch r.outcome {
		case passed:
			rw.marks[r.cell.Cap] = "ok"
		case failed:
			rw.marks[r.cell.Cap] = "FAIL"
		case knownFailure:
			rw.marks[r.cell.Cap] = "known"
		case excluded:
			rw.marks[r.cell.Cap] = "-" + ruleLetter[r.detail]
			ruleCount[r.detail]++
		}
	}
	width := 0
	for _, rw := range rows {
		width = max(width, len(rw.name))
	}
	fmt.Fprintf(w, "\n== combination matrix (ok: passed, FAIL: failed, known: known failure, -x: excluded by rule x; blank: the client has no check, or -run left it out)\n")
	fmt.Fprintf(w, "%-*s", width, "client topology era carrier")
	for _, cp := range capabilities {
		fmt.Fprintf(w, " %-5s", cp.Short)
	}
	fmt.Fprintln(w)
	for _, rw := range rows {
		fmt.Fprintf(w, "%-*s", width, rw.name)
		// A row excluded whole by one rule is one mark.
		first, whole := "", true
		for _, cp := range capabilities {
			m := rw.marks[cp.Name]
			if m == "" {
				continue
			}
			if first == "" {
				first = m
			}
			whole = whole && m == first && strings.HasPrefix(m, "-")
		}
		if whole && first != "" {
			fmt.Fprintf(w, " %s (every cell)\n", first)
			continue
		}
		for _, cp := range capabilities {
			fmt.Fprintf(w, " %-5s", rw.marks[cp.Name])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\ncells: %d passed, %d failed, %d known failures, %d excluded (%v)\n",
		counts[passed], counts[failed], counts[knownFailure], counts[excluded], took.Round(time.Millisecond))
	fmt.Fprintln(w, "exclusion rules:")
	for _, r := range rules {
		fmt.Fprintf(w, "  -%s %s (%d cells): %s\n", ruleLetter[r.Name], r.Name, ruleCount[r.Name], r.Reason)
	}
	fmt.Fprintf(w, "known failures (%s):\n", knownFile)
	for _, k := range knowns {
		mark := ""
		if k.Timing {
			mark = " (timing: may pass)"
		}
		fmt.Fprintf(w, "  %s%s: %s\n", k.Pattern, mark, k.Reason)
	}
	for _, r := range results {
		if r.outcome == failed || r.outcome == knownFailure {
			label := "FAIL"
			if r.outcome == knownFailure {
				label = "known"
			}
			fmt.Fprintf(w, "%s %s: %s\n", label, r.cell.Name(), r.detail)
		}
	}
}
