package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// bin is the mcpkit binary built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	if refuse := os.Getenv(refuseEnv); refuse != "" {
		if log := os.Getenv(launchLogEnv); log != "" {
			f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err == nil {
				fmt.Fprintln(f, "launched")
				f.Close()
			}
		}
		serveRefusing(refuse) // the test binary as a one-era stdio server
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "mcpkit-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "mcpkit")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startHTTP runs "mcpkit serve --http 127.0.0.1:0" for the test and returns
// its endpoint. Cleanup interrupts it and expects a clean exit.
func startHTTP(t *testing.T, extra ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--http", "127.0.0.1:0"}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve did not exit cleanly on SIGINT: %v", err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("serve did not exit within 10s of SIGINT")
		}
	})
	re := regexp.MustCompile(`serving MCP on (http://\S+/mcp)`)
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("serve exited before printing its address")
			}
			if m := re.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		case <-timeout:
			t.Fatal("serve printed no address within 10s")
		}
	}
}

// tgt is a target: a URL, or (url == "") the stdio demo server.
type tgt struct{ url string }

func (g tgt) String() string {
	if g.url == "" {
		return "stdio"
	}
	return "http"
}

// args builds "mcpkit CMD [URL] ARGS... [-- mcpkit serve --stdio]".
func (g tgt) args(cmd string, args ...string) []string {
	if g.url != "" {
		return append([]string{cmd, g.url}, args...)
	}
	return append(append([]string{cmd}, args...), "--", bin, "serve", "--stdio")
}

type result struct {
	stdout, stderr string
	code           int
}

func mcpkit(t *testing.T, args ...string) result {
	t.Helper()
	return mcpkitEnv(t, nil, args...)
}

// mcpkitEnv runs mcpkit with env added to the test's environment.
func mcpkitEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("mcpkit %q: %v", args, err)
	}
	return r
}

func expect(t *testing.T, r result, code int, stdoutHas ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	for _, s := range stdoutHas {
		if !strings.Contains(r.stdout, s) {
			t.Fatalf("stdout lacks %q\nstdout: %s\nstderr: %s", s, r.stdout, r.stderr)
		}
	}
}

// forEach runs f against the HTTP and the stdio server, in both eras.
func forEach(t *testing.T, f func(t *testing.T, g tgt, era string)) {
	url := startHTTP(t)
	for _, g := range []tgt{{url: url}, {}} {
		for _, era := range []string{"legacy", "modern"} {
			t.Run(g.String()+"/"+era, func(t *testing.T) {
				t.Parallel()
				f(t, g, era)
			})
		}
	}
}

var versions = map[string]string{"legacy": "2025-11-25", "modern": "2026-07-28"}

func TestInspect(t *testing.T) {
	forEach(t, func(t *testing.T, g tgt, era string) {
		r := mcpkit(t, g.args("inspect", "--era", era)...)
		expect(t, r, 0,
			"server:       mcpkit-demo 1.0.0",
			fmt.Sprintf("era:          %s (protocol %s)", era, versions[era]),
			"instructions: A demo server",
			`"tools":{"listChanged":true}`,
			"  add: Adds two numbers.",
			`input:  {"type":"object","properties":{"a":{"type":"number"`,
			"greet(name*, style)",
			"demo://readme  readme (text/plain)",
			"demo://greeting/{name}  greeting",
		)

		r = mcpkit(t, g.args("inspect", "--era", era, "--json")...)
		expect(t, r, 0)
		var got struct {
			Era             string `json:"era"`
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct {
				Name string `json:"name"`
			} `json:"serverInfo"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			Prompts []struct {
				Name string `json:"name"`
			} `json:"prompts"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &got, json.RejectUnknownMembers(false)); err != nil {
			t.Fatalf("inspect --json: %v\n%s", err, r.stdout)
		}
		if got.Era != era || got.ProtocolVersion != versions[era] || got.ServerInfo.Name != "mcpkit-demo" ||
			len(got.Tools) < 9 || len(got.Prompts) != 1 {
			t.Fatalf("inspect --json: %+v", got)
		}
	})
}

func TestCall(t *testing.T) {
	forEach(t, func(t *testing.T, g tgt, era string) {
		expect(t, mcpkit(t, g.args("call", "--era", era, "add", "a=2", "b=40")...), 0, `{"sum":42}`)
		expect(t, mcpkit(t, g.args("call", "--era", era, "add", `{"a":1.5,"b":1}`)...), 0, `{"sum":2.5}`)

		r := mcpkit(t, g.args("call", "--era", era, "--json", "add", "a=2", "b=40")...)
		expect(t, r, 0)
		var res struct {
			StructuredContent struct {
				Sum float64 `json:"sum"`
			} `json:"structuredContent"`
			IsError bool `json:"isError"`
			Content []struct {
				Type string `json:"type"`
			} `json:"content"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res, json.RejectUnknownMembers(false)); err != nil {
			t.Fatalf("call --json: %v\n%s", err, r.stdout)
		}
		if res.StructuredContent.Sum != 42 || res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" {
			t.Fatalf("call --json: %+v", res)
		}

		// Elicitation, answered from flags: the modern client answers the
		// input-required result, the legacy server's shim asks the client.
		expect(t, mcpkit(t, g.args("call", "--era", era, "signup", "--answer", "name=Bob", "--answer", "seats=3")...),
			0, "Welcome, Bob (free plan, 3 seats)!")
		expect(t, mcpkit(t, g.args("call", "--era", era, "--accept-defaults", "signup")...),
			0, "Welcome, guest (free plan, 1 seats)!")
		expect(t, mcpkit(t, g.args("call", "--era", era, "--answer", "plan=pro", "signup")...),
			0, "Welcome, guest (pro plan, 1 seats)!")
		// Declined (explicitly, or because stdin is no terminal): the tool
		// reports an error, on stderr under its label.
		for _, args := range [][]string{{"--decline", "signup"}, {"signup"}} {
			r := mcpkit(t, g.args("call", append([]string{"--era", era}, args...)...)...)
			expect(t, r, exitToolErr)
			if !strings.Contains(r.stderr, "reported an error (isError):\nserver: the user declined") {
				t.Errorf("call %q: stderr lacks the labelled tool error\nstdout: %s\nstderr: %s", args, r.stdout, r.stderr)
			}
		}

		expect(t, mcpkit(t, g.args("call", "--era", era, "summarize", "--sampling-reply", "MCP is a protocol.")...),
			0, "the model said: MCP is a protocol.")
		expect(t, mcpkit(t, g.args("call", "--era", era, "roots", "--root", "file:///a", "--root", "file:///b")...),
			0, "2 roots: file:///a file:///b")

		r = mcpkit(t, g.args("call", "--era", era, "count", "to=2")...)
		expect(t, r, 0, "counted to 2")
		for _, s := range []string{"progress: 2/2 counted 2", "[info] count: step 1 of 2"} {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
			}
		}

		expect(t, mcpkit(t, g.args("read", "--era", era, "demo://greeting/Bob")...), 0, "Hello, Bob!")
		expect(t, mcpkit(t, g.args("read", "--era", era, "demo://pixel")...),
			0, "<blob: 67 bytes of image/png: 89 50 4e 47 0d 0a 1a 0a 00 00 00 0d 49 48 44 52 ... from demo://pixel>")
		expect(t, mcpkit(t, g.args("prompt", "--era", era, "greet", "name=Ada", "style=pirate")...),
			0, "user: Greet Ada in a pirate style.")
		expect(t, mcpkit(t, g.args("complete", "--era", era, "--prompt", "greet", "style", "p")...), 0, "pirate")
		expect(t, mcpkit(t, g.args("complete", "--era", era, "--resource", "demo://greeting/{name}", "name", "a")...),
			0, "Ada\nAlan\n")
	})
}

func TestExitCodes(t *testing.T) {
	url := startHTTP(t)
	for _, g := range []tgt{{url: url}, {}} {
		t.Run(g.String(), func(t *testing.T) {
			// A tool error goes to stderr, labelled, never to stdout.
			r := mcpkit(t, g.args("call", "fail", "message=boom")...)
			expect(t, r, exitToolErr)
			if strings.Contains(r.stdout, "boom") || !strings.Contains(r.stderr, "mcpkit: the tool \"fail\" reported an error (isError):\nboom\n") {
				t.Errorf("a tool error: stdout %q, stderr %q; want it on stderr under its label", r.stdout, r.stderr)
			}
			// --json keeps the whole result on stdout for scripts.
			r = mcpkit(t, g.args("call", "--json", "fail", "message=boom")...)
			expect(t, r, exitToolErr, `"isError": true`, "boom")
			r = mcpkit(t, g.args("call", "nope")...)
			expect(t, r, exitProtocol)
			if !strings.Contains(r.stderr, "unknown tool") {
				t.Errorf("stderr: %s", r.stderr)
			}
			// A wrong --answer is a usage error (modern: the client
			// answers the input-required result itself).
			expect(t, mcpkit(t, g.args("call", "--era", "modern", "--answer", "nofield=1", "signup")...), exitUsage)
		})
	}

	// A port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	expect(t, mcpkit(t, "inspect", dead), exitConn)
	expect(t, mcpkit(t, "call", "add", "--", filepath.Join(t.TempDir(), "no-such-server")), exitConn)

	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"call"},
		{"call", url},
		{"call", "--era", "future", url, "add"},
		{"call", "--bogus", url, "add"},
		{"call", "not-a-url", "add"},
		{"call", url, "add", "novalue"},
		{"complete", url, "a", "b"},
		{"serve"},
		{"serve", "--stdio", "--http", ":0"},
		{"call", "add", "--"},
	} {
		r := mcpkit(t, args...)
		if r.code != exitUsage {
			t.Errorf("mcpkit %q: exit code %d, want %d\n%s", args, r.code, exitUsage, r.stderr)
		}
	}
	expect(t, mcpkit(t, "inspect", "--header", "X-Trace: 1", url), 0, "mcpkit-demo")
	expect(t, mcpkit(t, "inspect", "--header", "no-colon", url), exitUsage)
	expect(t, mcpkit(t, "inspect", "--header", "X-Trace: 1", "--", bin, "serve", "--stdio"), exitUsage)

	// Interrupted while the tool runs: the signal goes once the first
	// progress line shows the call under way (the handler is installed
	// before the call starts), never after a guessed delay. The count is
	// long enough (60 s) that it cannot finish first.
	cmd := exec.Command(bin, "call", url, "count", "to=600")
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	rd := bufio.NewReader(errPipe)
	for {
		line, err := rd.ReadString('\n')
		stderr.WriteString(line)
		if err != nil {
			t.Fatalf("call ended before its first progress line: %v\n%s", err, stderr.String())
		}
		if strings.HasPrefix(line, "progress: ") {
			break
		}
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	_, _ = io.Copy(&stderr, rd)
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != exitSignal {
		t.Errorf("call interrupted: %v, want exit code %d\n%s", err, exitSignal, stderr.String())
	}

	r := mcpkit(t, "help")
	expect(t, r, 0, "Exit codes:", "64  usage error")
}

func TestListen(t *testing.T) {
	url := startHTTP(t)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			cmd := exec.Command(bin, "listen", "--era", era, "--tools", "--resource", "demo://clock", url)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()
			ready := bufio.NewReader(stderr)
			line, err := ready.ReadString('\n')
			if err != nil || !strings.Contains(line, "listening") {
				t.Fatalf("listen: %q, %v", line, err)
			}
			go func() { _, _ = io.Copy(io.Discard, ready) }()
			lines := make(chan string, 8)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			// Each change is made again until listen prints it: on a legacy
			// HTTP connection the notifications ride the GET stream, which
			// the client opens in the background.
			for i, w := range []struct {
				trigger []string
				line    string
			}{
				{[]string{"add_tool"}, "notifications/tools/list_changed"},
				{[]string{"touch"}, "notifications/resources/updated demo://clock"},
			} {
				seen := false
				for try := 0; try < 10 && !seen; try++ {
					expect(t, mcpkit(t, append([]string{"call", url}, w.trigger...)...), 0)
					timeout := time.After(time.Second)
				wait:
					for {
						select {
						case l, ok := <-lines:
							if !ok {
								t.Fatalf("listen ended early (step %d)", i)
							}
							if l == w.line {
								seen = true
								break wait
							}
						case <-timeout:
							break wait
						}
					}
				}
				if !seen {
					t.Fatalf("listen never printed %q", w.line)
				}
			}
			_ = cmd.Process.Signal(syscall.SIGINT)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("listen after SIGINT: %v", err)
			}
		})
	}
}

func TestOutAndTimeout(t *testing.T) {
	url := startHTTP(t)
	out := filepath.Join(t.TempDir(), "pixel.png")
	expect(t, mcpkit(t, "read", "--out", out, url, "demo://pixel"), 0, "saved to "+out)
	b, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(b, pixelPNG) {
		t.Fatalf("--out wrote %x, %v; want %x", b, err, pixelPNG)
	}
	expect(t, mcpkit(t, "read", "--out", out, "--json", url, "demo://pixel"), exitUsage)
	expect(t, mcpkit(t, "inspect", "--out", out, url), exitUsage)

	for _, g := range []tgt{{url: url}, {}} {
		t.Run(g.String(), func(t *testing.T) {
			start := time.Now()
			r := mcpkit(t, g.args("call", "--timeout", "500ms", "count", "to=50")...)
			expect(t, r, exitConn)
			if !strings.Contains(r.stderr, "timed out after 500ms") {
				t.Errorf("stderr: %s", r.stderr)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the timed-out call took %v", d)
			}
			expect(t, mcpkit(t, g.args("call", "--timeout", "30s", "add", "a=1", "b=2")...), 0, `{"sum":3}`)
		})
	}
	r := mcpkit(t, "listen", "--timeout", "300ms", url)
	expect(t, r, exitConn)
	expect(t, mcpkit(t, "call", "--timeout", "-1s", url, "add"), exitUsage)
	expect(t, mcpkit(t, "call", "--timeout", "soon", url, "add"), exitUsage)
}

// TestReadmeStdioTarget runs the stdio example of README.md exactly as it
// is written there, from the repository root.
func TestReadmeStdioTarget(t *testing.T) {
	const line = `go run ./cmd/mcpkit call greet name=Ada -- go run ./examples/hello     # {"greeting":"Hello, Ada!"}`
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), line) {
		t.Fatalf("README.md no longer shows %q; keep this test in step with it", line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "call", "greet", "name=Ada", "--", "go", "run", "./examples/hello")
	cmd.Dir = filepath.Join("..", "..")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if got, want := strings.TrimSpace(stdout.String()), `{"greeting":"Hello, Ada!"}`; got != want {
		t.Fatalf("stdout %q, want %q\nstderr: %s", got, want, stderr.String())
	}
}

// TestLaunchErrorSaysItOnce checks the whole message for a stdio server
// that cannot start: the command is named once, then the cause.
func TestLaunchErrorSaysItOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-server")
	r := mcpkit(t, "call", "add", "--", missing, "--flag")
	expect(t, r, exitConn)
	if want := "mcpkit: starting " + missing + " --flag: no such file or directory\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
	r = mcpkit(t, "inspect", "--", "mcpkit-no-such-server-on-path")
	expect(t, r, exitConn)
	if want := "mcpkit: starting mcpkit-no-such-server-on-path: executable file not found in $PATH\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
}
