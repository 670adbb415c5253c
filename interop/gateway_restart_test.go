//go:build unix

package interop

// An upstream that dies: the everything server's process, killed by the
// test, loses its tools at the gateway's clients of both eras (with
// notifications/tools/list_changed) while the other upstream's stay, and
// they come back, announced the same way, once the gateway has launched
// it again.

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpkit/mcpkit/gateway"
	"github.com/mcpkit/mcpkit/mcp"
)

// heldCommand runs a program through a shell that first appends its pid
// to a file, and, while a hold file exists, waits for a line on a FIFO
// before it becomes the program: the test knows which process to kill
// and decides when a relaunch may proceed.
type heldCommand struct {
	dir  string
	gate *os.File // the FIFO, opened read-write so that writes never block
}

func newHeldCommand(t *testing.T) *heldCommand {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "gate"), 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	gate, err := os.OpenFile(filepath.Join(dir, "gate"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gate.Close() })
	return &heldCommand{dir: dir, gate: gate}
}

// command wraps argv.
func (h *heldCommand) command(argv []string) []string {
	script := `echo $$ >> "$0/pids"; if [ -e "$0/hold" ]; then read _ < "$0/gate"; fi; exec "$@"`
	return append([]string{"/bin/sh", "-c", script, h.dir}, argv...)
}

// lastPid is the pid of the latest launch.
func (h *heldCommand) lastPid(t *testing.T) int {
	t.Helper()
	f, err := os.Open(filepath.Join(h.dir, "pids"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pid := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if pid, err = strconv.Atoi(strings.TrimSpace(sc.Text())); err != nil {
			t.Fatal(err)
		}
	}
	if pid == 0 {
		t.Fatal("the command was never launched")
	}
	return pid
}

// hold makes the next launches wait; release lets the waiting one, and
// those after it, proceed.
func (h *heldCommand) hold(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, "hold"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (h *heldCommand) release(t *testing.T) {
	t.Helper()
	if err := os.Remove(filepath.Join(h.dir, "hold")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.gate.WriteString("go\n"); err != nil {
		t.Fatal(err)
	}
}

// awaitTools waits, on gc's tools/list_changed notifications, until the
// number of its tools under prefix satisfies ok.
func awaitTools(t *testing.T, ctx context.Context, gc *gwClient, prefix string, ok func(n int) bool, what string) {
	t.Helper()
	for {
		select {
		case <-gc.toolsChange:
		case <-ctx.Done():
			t.Fatalf("%s: no tools/list_changed notification said so", what)
		}
		if ok(len(withPrefix(toolNames(t, ctx, gc.Client), prefix))) {
			return
		}
	}
}

func TestGatewayUpstreamDiesAndComesBack(t *testing.T) {
	t.Parallel()
	held := newHeldCommand(t)
	up := everythingUpstream(t, "everything", "ev")
	up.Command = held.command(up.Command)
	// A second upstream stays up throughout, so that the client's list is
	// never empty while the first is down (an empty list is
	// TestGatewayToolsListWithNoUpstreamUp's case).
	stable := gateway.Upstream{Name: "gosdk", Prefix: "gs", URL: goSDKSSEServer(t)}
	tg := startGateway(t, &gateway.Options{Upstreams: []gateway.Upstream{up, stable}})
	tg.requireReady(t)
	want := tg.Health()[0].Tools

	var clients []*gwClient
	for _, e := range clientEras {
		gc := connectGateway(t, tg.URL, e.version)
		if n := len(withPrefix(toolNames(t, testCtx(t), gc.Client), "ev_")); n != want {
			t.Fatalf("%s: %d ev_ tools, want %d", e.name, n, want)
		}
		clients = append(clients, gc)
	}

	held.hold(t)
	if err := syscall.Kill(held.lastPid(t), syscall.SIGKILL); err != nil {
		t.Fatalf("killing the upstream: %v", err)
	}
	ctx := testCtx(t)
	for i, gc := range clients {
		awaitTools(t, ctx, gc, "ev_", func(n int) bool { return n == 0 }, clientEras[i].name+": the dead upstream's tools withdrawn")
		if got := callText(t, ctx, gc.Client, "gs_add", `{"x":1,"y":2}`); got != "3\n" {
			t.Errorf("%s: the other upstream's gs_add = %q", clientEras[i].name, got)
		}
	}
	// (Health's State turns from ready once the withdrawal is over, a
	// moment after the tools go: nothing to wait on for it.)
	if h := tg.Health()[0]; h.Tools != 0 {
		t.Errorf("health of the dead upstream: %+v", h)
	}
	for i, gc := range clients {
		if _, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: "ev_echo", Arguments: []byte(`{"message":"x"}`)}); err == nil {
			t.Errorf("%s: ev_echo answered while the upstream was down", clientEras[i].name)
		}
	}

	held.release(t)
	for i, gc := range clients {
		awaitTools(t, ctx, gc, "ev_", func(n int) bool { return n == want }, clientEras[i].name+": the upstream's tools back")
		if got := callText(t, ctx, gc.Client, "ev_echo", `{"message":"again"}`); !strings.Contains(got, "Echo: again") {
			t.Errorf("%s: ev_echo after the restart = %q", clientEras[i].name, got)
		}
	}
	if h := tg.Health()[0]; h.Connects != 2 || h.Tools != want {
		t.Errorf("health after the restart: %+v", h)
	}
}
