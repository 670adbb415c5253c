package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestCallTasks: a tool that requires a task is run as one with no flag
// (research), one that allows it with --task (count); the task's states
// go to stderr, and so does the progress of a 2025-11-25 task; inspect
// shows each tool's task support.
func TestCallTasks(t *testing.T) {
	states := regexp.MustCompile(`(?m)^task \S+: working\n(?s:.*)^task \S+: completed$`)
	forEach(t, func(t *testing.T, g tgt, era string) {
		r := mcpkit(t, g.args("call", "--era", era, "research", "topic=go")...)
		expect(t, r, 0, "a report on go")
		if !states.MatchString(r.stderr) {
			t.Errorf("research: stderr lacks the task's working and completed states:\n%s", r.stderr)
		}
		if era == "legacy" && !strings.Contains(r.stderr, "progress: 3/3 writing") {
			// A legacy task reports progress with the call's token
			// for as long as it runs, on the tasks/result stream over
			// Streamable HTTP.
			t.Errorf("research: stderr lacks the task's progress:\n%s", r.stderr)
		}

		r = mcpkit(t, g.args("call", "--era", era, "--task", "count", "to=2")...)
		expect(t, r, 0, "counted to 2")
		if !states.MatchString(r.stderr) {
			t.Errorf("count --task: stderr lacks the task's states:\n%s", r.stderr)
		}
		r = mcpkit(t, g.args("call", "--era", era, "count", "to=1")...)
		expect(t, r, 0, "counted to 1")
		if strings.Contains(r.stderr, "task ") {
			t.Errorf("count without --task ran as a task:\n%s", r.stderr)
		}

		r = mcpkit(t, g.args("inspect", "--era", era)...)
		expect(t, r, 0)
		for _, want := range []string{
			"research: Researches a topic",
			"    task:   required\n",
			"    task:   optional\n",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("inspect lacks %q:\n%s", want, r.stdout)
			}
		}
		if n := strings.Count(r.stdout, "    task:   "); n != 2 {
			t.Errorf("inspect shows task support for %d tools, want 2 (research, count)", n)
		}
	})
}
