package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/transport/stdio"
)

// refuseEnv makes the test binary a stdio server of one era: the demo
// server behind a filter that answers one method (initialize, or
// server/discover) with "method not found", as a server of the other era
// alone would.
const refuseEnv = "MCPKIT_TEST_REFUSE_METHOD"

// launchLogEnv names a file the refusing server appends a line to each
// time it starts, so a test can count launches.
const launchLogEnv = "MCPKIT_TEST_LAUNCH_LOG"

func serveRefusing(method string) {
	out := &lockedWriter{w: os.Stdout}
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Bytes()
			var m struct {
				ID     jsontext.Value `json:"id"`
				Method string         `json:"method"`
			}
			if json.Unmarshal(line, &m, json.RejectUnknownMembers(false)) == nil && m.Method == method && len(m.ID) > 0 {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", m.ID)
				continue
			}
			pw.Write(append(line, '\n'))
		}
		pw.Close()
	}()
	s, err := newDemoServer(slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := s.Serve(context.Background(), stdio.NewConn(pr, out, nil)); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}

func TestInspectRevisions(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	url := startHTTP(t)
	cases := []struct {
		name   string
		env    []string
		target []string
		want   string // the revisions line, and the note under it
	}{
		{"http/dual/auto", nil, []string{url},
			"revisions:    2026-07-28 (modern, via server/discover), 2025-11-25 (legacy, via initialize on a second connection)\ncapabilities:"},
		{"http/dual/legacy", nil, []string{"--era", "legacy", url},
			"revisions:    2026-07-28 (modern, via server/discover on a second connection), 2025-11-25 (legacy, via initialize)\ncapabilities:"},
		{"stdio/dual/modern", nil, []string{"--era", "modern", "--", bin, "serve", "--stdio"},
			"revisions:    2026-07-28 (modern, via server/discover), 2025-11-25 (legacy, via initialize on the same process)\ncapabilities:"},
		{"stdio/legacy-only/auto", []string{refuseEnv + "=server/discover"}, []string{"--", self},
			"revisions:    2025-11-25 (legacy, via initialize)\n              no modern revision: the server/discover probe got no modern answer\ncapabilities:"},
		{"stdio/legacy-only/legacy", []string{refuseEnv + "=server/discover"}, []string{"--era", "legacy", "--", self},
			"revisions:    2025-11-25 (legacy, via initialize)\n              no modern revision: server/discover on the same process failed: "},
		{"stdio/modern-only/auto", []string{refuseEnv + "=initialize"}, []string{"--", self},
			"revisions:    2026-07-28 (modern, via server/discover)\n              no legacy revision: initialize on the same process failed: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := mcpkitEnv(t, c.env, append([]string{"inspect"}, c.target...)...)
			expect(t, r, 0, c.want)
		})
	}

	// Over stdio, both eras are learnt from one launch of the command.
	for _, era := range []string{"auto", "legacy"} {
		t.Run("stdio/dual/"+era+"/one launch", func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "launches")
			r := mcpkitEnv(t, []string{refuseEnv + "=nothing/refused", launchLogEnv + "=" + log}, "inspect", "--era", era, "--", self)
			expect(t, r, 0, "2026-07-28 (modern, via server/discover", "2025-11-25 (legacy, via initialize")
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), "launched"); n != 1 {
				t.Errorf("the server was launched %d times, want once", n)
			}
		})
	}

	r := mcpkit(t, "inspect", "--json", url)
	expect(t, r, 0)
	var got struct {
		Revisions []revision `json:"revisions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got, json.RejectUnknownMembers(false)); err != nil {
		t.Fatal(err)
	}
	want := []revision{{"2026-07-28", "modern", "server/discover"}, {"2025-11-25", "legacy", "initialize on a second connection"}}
	if fmt.Sprint(got.Revisions) != fmt.Sprint(want) {
		t.Errorf("--json revisions %+v, want %+v", got.Revisions, want)
	}
}
