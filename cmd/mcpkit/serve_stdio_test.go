package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

const (
	initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`
	addLine        = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}`
	countLine      = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"count","arguments":{"to":2}}}`
)

// answersByID decodes stdout, one message a line, and returns the
// responses by id.
func answersByID(t *testing.T, stdout string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line == "" {
			continue // nothing written at all
		}
		var m struct {
			ID     jsontext.Value `json:"id"`
			Method string         `json:"method"`
		}
		if err := json.Unmarshal([]byte(line), &m, json.RejectUnknownMembers(false)); err != nil {
			t.Fatalf("stdout line is not a message: %v: %q", err, line)
		}
		if m.Method == "" {
			out[string(m.ID)] = line
		}
	}
	return out
}

// TestServeStdioEndOfInput: requests piped into "mcpkit serve --stdio" are
// all answered before it exits (0) at the end of its input — the stdio
// shutdown — even those still running then.
func TestServeStdioEndOfInput(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--stdio")
	cmd.Stdin = strings.NewReader(initializeLine + "\n" + addLine + "\n" + countLine + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpkit serve --stdio: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	got := answersByID(t, stdout.String())
	if a := got["1"]; !strings.Contains(a, `"serverInfo":{"name":"mcpkit-demo"`) {
		t.Errorf("initialize: %q", a)
	}
	if a := got["2"]; !strings.Contains(a, `"structuredContent":{"sum":42}`) {
		t.Errorf("tools/call add: %q", a)
	}
	if a := got["3"]; !strings.Contains(a, `counted to 2`) {
		t.Errorf("tools/call count: %q", a)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestServeStdioSignalWithInputOpen: SIGTERM stops "mcpkit serve --stdio"
// while its client keeps standard input open (a Read of it cannot be
// interrupted; the shutdown gives up on it after ShutdownTimeout).
func TestServeStdioSignalWithInputOpen(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--stdio")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(stdin, initializeLine+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdoutPipe).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("initialize answer: %q, %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if ctx.Err() != nil {
		t.Fatal("mcpkit serve --stdio did not exit on SIGTERM while its input stayed open")
	}
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 0) {
		t.Fatalf("exit: %v", err)
	}
}
