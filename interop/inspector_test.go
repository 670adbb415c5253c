package interop

// The official MCP Inspector (@modelcontextprotocol/inspector, its CLI
// mode, installed by peers/install.sh) against `mcpkit serve`, over stdio
// and over Streamable HTTP: the clients people run, in tests (issue 34).
// Every check reads the JSON the Inspector prints (--format json).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// inspector runs the Inspector's CLI against target (a URL, or a command
// and its arguments) with the Inspector options opts; it returns stdout,
// stderr and the exit code. HOME is a fresh folder, so that no catalog,
// stored OAuth or setting of the machine reaches the run.
func inspector(t *testing.T, target []string, opts ...string) (stdout, stderr string, code int) {
	t.Helper()
	dir := peers(t)
	launcher := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	// Under --cli the target comes first and everything after "--" is the
	// Inspector's own options (its v2 argument order).
	args := append([]string{launcher, "--cli"}, target...)
	args = append(append(args, "--"), opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "node"), args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "MCP_CATALOG_PATH=", "NO_COLOR=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("inspector %s: did not finish: %v\nstderr: %s", strings.Join(opts, " "), ctx.Err(), errOut.String())
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("inspector: %v", err)
	}
	return out.String(), errOut.String(), code
}

// inspectorJSON runs a method that must succeed and decodes the
// "result" member of the one JSON object the Inspector prints into v.
func inspectorJSON(t *testing.T, target []string, v any, opts ...string) {
	t.Helper()
	out, errOut, code := inspector(t, target, append(opts, "--format", "json")...)
	if code != 0 {
		t.Fatalf("inspector %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(opts, " "), code, out, errOut)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil || env.Result == nil {
		t.Fatalf("inspector %s: not a {result} object (%v):\n%s", strings.Join(opts, " "), err, out)
	}
	if err := json.Unmarshal(env.Result, v); err != nil {
		t.Fatalf("inspector %s: result does not decode: %v\n%s", strings.Join(opts, " "), err, env.Result)
	}
}

// serveHTTPCLI starts `mcpkit serve --http 127.0.0.1:0` and returns its
// endpoint, read from the line the command prints once it listens; the
// process is interrupted and waited for at the end of the test.
func serveHTTPCLI(t *testing.T, extra ...string) string {
	t.Helper()
	cmd := exec.Command(mcpkitBin(t), append([]string{"serve", "--http", "127.0.0.1:0"}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-done
	})
	endpoint := make(chan string, 1)
	go func() { // owned by the test: ends when the process's stderr closes
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "mcpkit: serving MCP on "); ok {
				url, _, _ := strings.Cut(rest, " ")
				select {
				case endpoint <- url:
				default:
				}
			}
		}
		_ = cmd.Wait()
	}()
	select {
	case url := <-endpoint:
		return url
	case <-done:
		t.Fatal("mcpkit serve --http exited before listening")
	case <-testCtx(t).Done():
		t.Fatal("mcpkit serve --http did not say where it listens")
	}
	return ""
}

// TestInspectorServe: the Inspector lists and calls tools, lists and
// reads resources, lists and gets prompts of the demo server, over stdio
// and over Streamable HTTP, and finds the demo's MCP App.
func TestInspectorServe(t *testing.T) {
	t.Parallel()
	peers(t)
	bin := mcpkitBin(t)
	for _, tc := range []struct {
		name   string
		target func(t *testing.T) []string
	}{
		{"stdio", func(*testing.T) []string { return []string{bin, "serve", "--stdio"} }},
		{"streamable-http", func(t *testing.T) []string { return []string{serveHTTPCLI(t)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			target := tc.target(t)

			var init struct {
				ServerInfo      struct{ Name, Version string } `json:"serverInfo"`
				ProtocolVersion string                         `json:"protocolVersion"`
				Capabilities    map[string]json.RawMessage     `json:"capabilities"`
			}
			inspectorJSON(t, target, &init, "--method", "initialize")
			if init.ServerInfo.Name != "mcpkit-demo" || init.ProtocolVersion == "" {
				t.Errorf("initialize: server %+v, revision %q", init.ServerInfo, init.ProtocolVersion)
			}
			for _, c := range []string{"tools", "resources", "prompts"} {
				if _, ok := init.Capabilities[c]; !ok {
					t.Errorf("initialize: capabilities lack %s: %v", c, init.Capabilities)
				}
			}

			var tools struct {
				Tools []struct {
					Name        string         `json:"name"`
					InputSchema map[string]any `json:"inputSchema"`
					Meta        map[string]any `json:"_meta"`
				} `json:"tools"`
			}
			inspectorJSON(t, target, &tools, "--method", "tools/list")
			names := map[string]bool{}
			for _, tl := range tools.Tools {
				names[tl.Name] = true
				if tl.InputSchema["type"] != "object" {
					t.Errorf("tools/list: %s has input schema %v", tl.Name, tl.InputSchema)
				}
			}
			for _, want := range []string{"add", "fail", "roll", "count", "signup"} {
				if !names[want] {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}

			var sum struct {
				Content    []struct{ Type, Text string } `json:"content"`
				Structured struct {
					Sum float64 `json:"sum"`
				} `json:"structuredContent"`
				IsError bool `json:"isError"`
			}
			inspectorJSON(t, target, &sum, "--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "--tool-arg", "b=40")
			if sum.Structured.Sum != 42 || sum.IsError || len(sum.Content) != 1 || !strings.Contains(sum.Content[0].Text, "42") {
				t.Errorf("tools/call add 2 40: %+v", sum)
			}

			// A tool error: the Inspector prints it and exits 5.
			out, errOut, code := inspector(t, target, "--method", "tools/call", "--tool-name", "fail", "--tool-arg", "message=out of cheese", "--format", "json")
			if code != 5 || !strings.Contains(out, `"isError":true`) || !strings.Contains(out, "out of cheese") || !strings.Contains(errOut, "tool_is_error") {
				t.Errorf("tools/call fail: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}

			// The demo's MCP App, as the Inspector's app probe sees it.
			out, errOut, code = inspector(t, target, "--method", "tools/call", "--tool-name", "roll", "--app-info")
			var app struct {
				HasApp           bool   `json:"hasApp"`
				ResourceURI      string `json:"resourceUri"`
				ResourceMIMEType string `json:"resourceMimeType"`
			}
			if code != 0 || json.Unmarshal([]byte(out), &app) != nil || !app.HasApp ||
				app.ResourceURI != "ui://mcpkit-demo/dice" || app.ResourceMIMEType != "text/html;profile=mcp-app" {
				t.Errorf("tools/call roll --app-info: exit %d %+v\nstdout: %s\nstderr: %s", code, app, out, errOut)
			}

			var resources struct {
				Resources []struct{ URI, Name, MIMEType string } `json:"resources"`
			}
			inspectorJSON(t, target, &resources, "--method", "resources/list")
			uris := map[string]string{}
			for _, r := range resources.Resources {
				uris[r.URI] = r.MIMEType
			}
			if uris["demo://readme"] != "text/plain" || uris["ui://mcpkit-demo/dice"] != "text/html;profile=mcp-app" {
				t.Errorf("resources/list: %v", uris)
			}

			var read struct {
				Contents []struct{ URI, MIMEType, Text string } `json:"contents"`
			}
			inspectorJSON(t, target, &read, "--method", "resources/read", "--uri", "demo://greeting/Ada")
			if len(read.Contents) != 1 || read.Contents[0].Text != "Hello, Ada!" || read.Contents[0].URI != "demo://greeting/Ada" {
				t.Errorf("resources/read demo://greeting/Ada: %+v", read)
			}
			read.Contents = nil
			inspectorJSON(t, target, &read, "--method", "resources/read", "--uri", "demo://readme")
			if len(read.Contents) != 1 || !strings.Contains(read.Contents[0].Text, "both eras") {
				t.Errorf("resources/read demo://readme: %+v", read)
			}

			var prompts struct {
				Prompts []struct {
					Name      string `json:"name"`
					Arguments []struct {
						Name     string `json:"name"`
						Required bool   `json:"required"`
					} `json:"arguments"`
				} `json:"prompts"`
			}
			inspectorJSON(t, target, &prompts, "--method", "prompts/list")
			if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "greet" || len(prompts.Prompts[0].Arguments) != 2 ||
				!prompts.Prompts[0].Arguments[0].Required {
				t.Errorf("prompts/list: %+v", prompts)
			}

			var prompt struct {
				Description string `json:"description"`
				Messages    []struct {
					Role    string `json:"role"`
					Content struct{ Type, Text string }
				} `json:"messages"`
			}
			inspectorJSON(t, target, &prompt, "--method", "prompts/get", "--prompt-name", "greet", "--prompt-args", "name=Ada", "--prompt-args", "style=pirate")
			if prompt.Description != "a pirate greeting" || len(prompt.Messages) != 1 || prompt.Messages[0].Role != "user" ||
				prompt.Messages[0].Content.Text != "Greet Ada in a pirate style." {
				t.Errorf("prompts/get greet: %+v", prompt)
			}
		})
	}
}
