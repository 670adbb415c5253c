package command

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/transport"
)

// The test binary doubles as the child process: with MCPKIT_TEST_CHILD set,
// TestMain runs one of these behaviours instead of the tests.
//
//	echo          echo each line back; exit 0 at stdin EOF
//	ignore-stdin  say "ready", then keep running after stdin EOF
//	ignore-term   like ignore-stdin, and also ignore SIGTERM
//	term-exit0    like ignore-stdin, but exit 0 on SIGTERM
//	exit3         exit with status 3 at stdin EOF
const childEnv = "MCPKIT_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	goleak.VerifyTestMain(m)
}

func runChild(mode string) int {
	in := bufio.NewReader(os.Stdin)
	ready := func() { fmt.Println(`{"ready":true}`) }
	waitForEOF := func() {
		for {
			if _, err := in.ReadString('\n'); err != nil {
				return
			}
		}
	}
	forever := func() int {
		time.Sleep(time.Hour) // a timer keeps the runtime from declaring a deadlock
		return 0
	}
	switch mode {
	case "echo":
		out := bufio.NewWriter(os.Stdout)
		for {
			line, err := in.ReadString('\n')
			if line != "" {
				out.WriteString(strings.TrimSuffix(line, "\n") + "\n")
				out.Flush()
			}
			if err != nil {
				return 0
			}
		}
	case "ignore-stdin":
		ready()
		waitForEOF()
		return forever()
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		ready()
		waitForEOF()
		return forever()
	case "term-exit0":
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		ready()
		waitForEOF()
		<-ch
		return 0
	case "exit3":
		waitForEOF()
		return 3
	}
	fmt.Fprintln(os.Stderr, "unknown child mode", mode)
	return 2
}

const hangGuard = 20 * time.Second

// leakCheck checks for goroutines once the test and all its cleanups
// (which close the child) are done.
func leakCheck(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

func child(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// Under -race a child would sleep 1s at exit by default (GORACE
	// atexit_sleep_ms), which would blur the timings below.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "GORACE="+gorace)
	return cmd
}

func start(t *testing.T, ctx context.Context, mode string, opts Options) *Conn {
	t.Helper()
	c, err := Start(ctx, child(mode), &opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		c.Close()
		<-c.Exited()
	})
	return c
}

func read(t *testing.T, c *Conn) string {
	t.Helper()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() {
		b, err := c.Read(context.Background())
		ch <- res{b, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("Read: %v", r.err)
		}
		return string(r.b)
	case <-time.After(hangGuard):
		t.Fatal("Read hung")
		return ""
	}
}

// closeWithin calls Close and returns its error and duration.
func closeWithin(t *testing.T, c *Conn) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	ch := make(chan error, 1)
	go func() { ch <- c.Close() }()
	select {
	case err := <-ch:
		return time.Since(start), err
	case <-time.After(hangGuard):
		t.Fatal("Close hung")
		return 0, nil
	}
}

// signalled reports the signal that ended the child, if any.
func signalled(t *testing.T, c *Conn) syscall.Signal {
	t.Helper()
	select {
	case <-c.Exited():
	default:
		t.Fatal("child not reaped after Close")
	}
	ws := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

func TestEchoRoundTrip(t *testing.T) {
	leakCheck(t)
	c := start(t, context.Background(), "echo", Options{})
	ctx := context.Background()
	msgs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"{\n  \"pretty\": true\n}", // compacted on the way out
		`{"big":"` + strings.Repeat("x", 200<<10) + `"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	for _, m := range msgs {
		if err := c.Write(ctx, transport.Message{Data: []byte(m)}); err != nil {
			t.Fatalf("Write: %v", err)
		}
		got := read(t, c)
		want := m
		if strings.Contains(m, "\n") {
			want = `{"pretty":true}`
		}
		if got != want {
			t.Fatalf("echo = %.80q, want %.80q", got, want)
		}
	}
	_, err := closeWithin(t, c)
	if err != nil {
		t.Errorf("Close = %v, want nil for a child that exits at stdin EOF", err)
	}
	if sig := signalled(t, c); sig != 0 {
		t.Errorf("child ended by %v", sig)
	}
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	// After Close the Conn reports ErrClosed.
	if _, err := c.Read(ctx); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read after Close = %v, want ErrClosed", err)
	}
	if err := c.Write(ctx, transport.Message{Data: []byte("{}")}); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// TestWellBehavedChildNoSignals: with long waits, a child that exits at
// stdin EOF is never signalled, and Close does not wait for the bounds.
func TestWellBehavedChildNoSignals(t *testing.T) {
	leakCheck(t)
	c := start(t, context.Background(), "echo", Options{ExitWait: time.Minute, TermWait: time.Minute})
	took, err := closeWithin(t, c)
	if err != nil {
		t.Errorf("Close = %v", err)
	}
	if sig := signalled(t, c); sig != 0 {
		t.Errorf("child ended by %v", sig)
	}
	if took >= hangGuard {
		t.Errorf("Close took %v", took)
	}
}

func TestChildExitStatusReported(t *testing.T) {
	leakCheck(t)
	c := start(t, context.Background(), "exit3", Options{ExitWait: time.Minute})
	_, err := closeWithin(t, c)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Close = %v, want the exit status", err)
	}
	if strings.Contains(fmt.Sprint(err), "SIG") {
		t.Errorf("Close = %v: no signal was needed", err)
	}
	if sig := signalled(t, c); sig != 0 {
		t.Errorf("child ended by %v", sig)
	}
}

func TestChildIgnoringStdinGetsSIGTERM(t *testing.T) {
	leakCheck(t)
	c := start(t, context.Background(), "ignore-stdin", Options{ExitWait: 200 * time.Millisecond, TermWait: time.Minute})
	if got := read(t, c); got != `{"ready":true}` {
		t.Fatalf("child said %q", got)
	}
	took, err := closeWithin(t, c)
	if err == nil || !strings.Contains(err.Error(), "SIGTERM") {
		t.Errorf("Close = %v, want it to report SIGTERM", err)
	}
	if strings.Contains(fmt.Sprint(err), "SIGKILL") {
		t.Errorf("Close = %v: SIGKILL was not needed", err)
	}
	if sig := signalled(t, c); sig != syscall.SIGTERM {
		t.Errorf("child ended by %v, want SIGTERM", sig)
	}
	if took < 200*time.Millisecond {
		t.Errorf("Close took %v: SIGTERM came before ExitWait", took)
	}
}

func TestChildExitingCleanlyOnSIGTERM(t *testing.T) {
	leakCheck(t)
	c := start(t, context.Background(), "term-exit0", Options{ExitWait: 100 * time.Millisecond, TermWait: time.Minute})
	if got := read(t, c); got != `{"ready":true}` {
		t.Fatalf("child said %q", got)
	}
	_, err := closeWithin(t, c)
	if err == nil || !strings.Contains(err.Error(), "SIGTERM") {
		t.Errorf("Close = %v, want it to report SIGTERM", err)
	}
	if strings.Contains(fmt.Sprint(err), "%!") {
		t.Errorf("Close error is malformed: %q", err)
	}
	if sig := signalled(t, c); sig != 0 || c.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("child: signal %v, exit %d; want a clean exit", sig, c.cmd.ProcessState.ExitCode())
	}
}

func TestChildIgnoringSIGTERMGetsSIGKILL(t *testing.T) {
	leakCheck(t)
	c := start(t, context.Background(), "ignore-term", Options{ExitWait: 200 * time.Millisecond, TermWait: 200 * time.Millisecond})
	if got := read(t, c); got != `{"ready":true}` {
		t.Fatalf("child said %q", got)
	}
	took, err := closeWithin(t, c)
	if err == nil || !strings.Contains(err.Error(), "SIGKILL") {
		t.Errorf("Close = %v, want it to report SIGKILL", err)
	}
	if sig := signalled(t, c); sig != syscall.SIGKILL {
		t.Errorf("child ended by %v, want SIGKILL", sig)
	}
	if took < 400*time.Millisecond {
		t.Errorf("Close took %v, less than ExitWait+TermWait", took)
	}
}

func TestContextCancelShutsChildDown(t *testing.T) {
	leakCheck(t)
	for _, tc := range []struct {
		mode     string
		exitWait time.Duration
		sig      syscall.Signal
	}{
		{"echo", hangGuard / 2, 0}, // exits at stdin EOF: the bound is never reached
		{"ignore-stdin", 200 * time.Millisecond, syscall.SIGTERM},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := start(t, ctx, tc.mode, Options{ExitWait: tc.exitWait, TermWait: time.Minute})
			if tc.mode == "echo" {
				if err := c.Write(ctx, transport.Message{Data: []byte(`{"hello":1}`)}); err != nil {
					t.Fatal(err)
				}
			}
			if got := read(t, c); got == "" {
				t.Fatal("no first message")
			}
			cancel()
			select {
			case <-c.Exited():
			case <-time.After(hangGuard):
				t.Fatal("child still running after ctx cancellation")
			}
			if sig := signalled(t, c); sig != tc.sig {
				t.Errorf("child ended by %v, want %v", sig, tc.sig)
			}
			// Close after the ctx shutdown reports the same outcome.
			_, err := closeWithin(t, c)
			if (err != nil) != (tc.sig != 0) {
				t.Errorf("Close = %v", err)
			}
			if _, err := c.Read(context.Background()); !errors.Is(err, transport.ErrClosed) && err != io.EOF {
				t.Errorf("Read after shutdown = %v", err)
			}
		})
	}
}

func TestChildExitIsEOF(t *testing.T) {
	leakCheck(t)
	c := start(t, context.Background(), "exit3", Options{})
	// Close stdin only: the child exits by itself and its stdout ends.
	c.toChild.Close()
	select {
	case <-c.Exited():
	case <-time.After(hangGuard):
		t.Fatal("child did not exit")
	}
	b, err := c.Read(context.Background())
	if err != io.EOF {
		t.Errorf("Read after the child exited = %q, %v; want io.EOF", b, err)
	}
	closeWithin(t, c)
}

func TestStartErrors(t *testing.T) {
	leakCheck(t)
	cmd := child("echo")
	cmd.Stdin = strings.NewReader("")
	if _, err := Start(context.Background(), cmd, nil); err == nil {
		t.Error("Start with cmd.Stdin set succeeded")
	}
	cmd = child("echo")
	cmd.Stdout = io.Discard
	if _, err := Start(context.Background(), cmd, nil); err == nil {
		t.Error("Start with cmd.Stdout set succeeded")
	}
	_, err := Start(context.Background(), exec.Command("/nonexistent/mcp-server"), nil)
	if err == nil {
		t.Fatal("Start of a missing binary succeeded")
	}
	// The program is named once, by os/exec's own error.
	if got, want := err.Error(), "command: fork/exec /nonexistent/mcp-server: no such file or directory"; got != want {
		t.Errorf("Start of a missing binary: %q, want %q", got, want)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Start of a missing binary: %v is not os.ErrNotExist", err)
	}
}
