package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestCallTaskProgress: `call --task` on the demo's count tool shows the
// task's progress on stderr, over stdio and Streamable HTTP, in both eras:
// a 2025-11-25 task's every step once, in order (they travel on the
// tasks/result stream, queued until it is in flight); a 2026-07-28 task's
// steps as its states' messages, increasing, none twice (the client
// listens for the task's changes while it waits; a step that came and
// went before the subscription was agreed is not seen, so how many show
// depends on the machine's pace: what is checked here is their order and
// the outcome, and TestCallTaskProgressGated proves that a step shows
// while the task runs, without a clock).
func TestCallTaskProgress(t *testing.T) {
	forEach(t, func(t *testing.T, g tgt, era string) {
		if era == "legacy" {
			r := mcpkit(t, g.args("call", "--era", era, "--task", "count", "to=3")...)
			expect(t, r, 0, "counted to 3")
			re := regexp.MustCompile(`(?m)^progress: \d+/3 counted \d+$`)
			got := strings.Join(re.FindAllString(r.stderr, -1), "|")
			want := "progress: 1/3 counted 1|progress: 2/3 counted 2|progress: 3/3 counted 3"
			if got != want {
				t.Errorf("progress lines %q, want %q\nstderr:\n%s", got, want, r.stderr)
			}
			return
		}
		r := mcpkit(t, g.args("call", "--era", era, "--task", "count", "to=10")...)
		expect(t, r, 0, "counted to 10")
		re := regexp.MustCompile(`(?m)^task \S+: working: counted (\d+) \((\d+)/10\)$`)
		lines := re.FindAllStringSubmatch(r.stderr, -1)
		last := 0
		for _, m := range lines {
			n, _ := strconv.Atoi(m[1])
			if n <= last || m[1] != m[2] {
				t.Errorf("progress %s after %d (%q)\nstderr:\n%s", m[1], last, m[0], r.stderr)
			}
			last = n
		}
		if !strings.Contains(r.stderr, ": completed") {
			t.Errorf("no completed state:\n%s", r.stderr)
		}
		t.Logf("%d of 10 steps seen", len(lines))
	})
}
