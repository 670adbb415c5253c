package mcptest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
)

// errorsTB records the errors a check reports instead of failing.
type errorsTB struct {
	testing.TB
	errs []string
}

func (e *errorsTB) Helper() {}
func (e *errorsTB) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// TestCheckProgress: the helpers' progress check passes increasing steps
// and reports a step repeated or going back, as a handler run again
// after a round of input used to send them.
func TestCheckProgress(t *testing.T) {
	steps := func(v ...float64) []mcp.ProgressParams {
		ps := make([]mcp.ProgressParams, len(v))
		for i := range v {
			ps[i].Progress = v[i]
		}
		return ps
	}
	for _, tc := range []struct {
		seen []mcp.ProgressParams
		bad  bool
	}{
		{nil, false},
		{steps(1), false},
		{steps(1, 2, 3, 4), false},
		{steps(0.5, 0.75, 1), false},
		{steps(1, 2, 3, 1, 2, 3), true},
		{steps(1, 1), true},
	} {
		tb := &errorsTB{TB: t}
		checkProgress(tb, "tool", tc.seen)
		if got := len(tb.errs) > 0; got != tc.bad {
			t.Errorf("steps %v: reported %q, want an error: %v", progressValues(tc.seen), tb.errs, tc.bad)
		}
		if tc.bad && len(tb.errs) == 1 && !strings.Contains(tb.errs[0], "progress must increase") {
			t.Errorf("steps %v: error %q", progressValues(tc.seen), tb.errs[0])
		}
	}
}
