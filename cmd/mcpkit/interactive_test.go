package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// tmuxSession runs command in a detached tmux session on a private server
// (its own socket), so that mcpkit sees a terminal on stdin and stderr.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func startTmux(t *testing.T, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		msg := "tmux not found in $PATH (Debian package tmux): the interactive tests skip, or fail with MCPKIT_REQUIRE_TMUX=1"
		if os.Getenv("MCPKIT_REQUIRE_TMUX") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("mcpkit-test-%d", time.Now().UnixNano())}
	// The shell keeps the pane open after mcpkit exits, with its status.
	s.tmux("new-session", "-d", "-x", "200", "-y", "50", "sh", "-c", command+"; echo EXIT=$?; sleep 600")
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	return s
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// waitFor waits until the screen shows text, and returns the screen.
func (s *tmuxSession) waitFor(text string) string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		screen := s.tmux("capture-pane", "-p", "-J")
		if strings.Contains(screen, text) {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the terminal never showed %q; it shows:\n%s", text, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// answer waits for prompt, then types line and Enter.
func (s *tmuxSession) answer(prompt, line string) {
	s.t.Helper()
	s.waitFor(prompt)
	if line != "" {
		s.tmux("send-keys", "-l", line)
	}
	s.tmux("send-keys", "Enter")
}

func TestInteractiveForm(t *testing.T) {
	url := startHTTP(t)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			s := startTmux(t, bin+" call --era "+era+" "+url+" signup")
			screen := s.waitFor("name [guest]: ")
			for _, want := range []string{"The server asks: Sign up for the demo", "Name (name) *required* [string]",
				"What should we call you?"} {
				if !strings.Contains(screen, want) {
					t.Errorf("the form lacks %q:\n%s", want, screen)
				}
			}
			s.answer("name [guest]: ", "Ada")
			screen = s.waitFor("plan [free]: ")
			if !strings.Contains(screen, "choices: free, pro") {
				t.Errorf("the form lacks the choices:\n%s", screen)
			}
			s.tmux("send-keys", "-l", "gold")
			s.tmux("send-keys", "Enter")
			s.waitFor(`"gold" is not one of free, pro`)
			s.tmux("send-keys", "-l", "pro")
			s.tmux("send-keys", "Enter")
			if screen := s.waitFor("seats [1]: "); !strings.Contains(screen, "must be: from 1 to 100") {
				t.Errorf("the form does not show the bounds before the first answer:\n%s", screen)
			}
			s.answer("seats [1]: ", "500")
			s.waitFor("500 is above the maximum 100")
			s.tmux("send-keys", "Enter") // the default
			screen = s.waitFor("EXIT=")
			if !strings.Contains(screen, "Welcome, Ada (pro plan, 1 seats)!") || !strings.Contains(screen, "EXIT=0") {
				t.Fatalf("after the form:\n%s", screen)
			}
		})
	}
}

func TestInteractiveURLConsent(t *testing.T) {
	url := startHTTP(t)
	for _, reply := range []string{"y", ""} {
		t.Run(fmt.Sprintf("reply=%q", reply), func(t *testing.T) {
			s := startTmux(t, bin+" call "+url+" docs")
			screen := s.waitFor("Open it yourself and continue? [y/N] ")
			if !strings.Contains(screen, "URL: https://modelcontextprotocol.io/specification") {
				t.Errorf("the URL is not shown in full:\n%s", screen)
			}
			s.answer("[y/N] ", reply)
			want := "you chose to decline the page"
			if reply == "y" {
				want = "you chose to accept the page"
			}
			screen = s.waitFor("EXIT=")
			if !strings.Contains(screen, want) {
				t.Fatalf("want %q:\n%s", want, screen)
			}
		})
	}
}

func TestInteractiveProgress(t *testing.T) {
	url := startHTTP(t)
	s := startTmux(t, bin+" call "+url+" count to=3")
	screen := s.waitFor("EXIT=")
	if !strings.Contains(screen, "[####################] 3/3 counted 3") || !strings.Contains(screen, "counted to 3") {
		t.Fatalf("no progress bar:\n%s", screen)
	}
}

func TestInteractiveSampling(t *testing.T) {
	url := startHTTP(t)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			s := startTmux(t, bin+" call --era "+era+" "+url+" summarize")
			screen := s.waitFor("(!decline to refuse):")
			for _, want := range []string{"The server asks for a model's reply (sampling, at most 100 tokens).",
				"user: Summarize MCP in one line."} {
				if !strings.Contains(screen, want) {
					t.Errorf("the sampling request lacks %q:\n%s", want, screen)
				}
			}
			s.tmux("send-keys", "Enter")
			s.waitFor("the reply is empty")
			s.tmux("send-keys", "-l", "MCP links models")
			s.tmux("send-keys", "Enter")
			s.tmux("send-keys", "-l", "to tools.")
			s.tmux("send-keys", "Enter")
			s.tmux("send-keys", "Enter")
			screen = s.waitFor("EXIT=")
			if !strings.Contains(screen, "the model said: MCP links models\nto tools.") || !strings.Contains(screen, "EXIT=0") {
				t.Fatalf("after the reply:\n%s", screen)
			}
		})
	}
	t.Run("decline", func(t *testing.T) {
		s := startTmux(t, bin+" call "+url+" summarize")
		s.answer("(!decline to refuse):", "!decline")
		screen := s.waitFor("EXIT=")
		if strings.Contains(screen, "EXIT=0") || !strings.Contains(screen, "declined") {
			t.Fatalf("after declining:\n%s", screen)
		}
	})
}

// TestInteractiveTimeout: --timeout ends a command waiting on the terminal.
func TestInteractiveTimeout(t *testing.T) {
	url := startHTTP(t)
	s := startTmux(t, bin+" call --timeout 2s "+url+" signup")
	s.waitFor("name [guest]: ")
	screen := s.waitFor("EXIT=")
	if !strings.Contains(screen, "timed out after 2s") || !strings.Contains(screen, "EXIT=3") {
		t.Fatalf("after the timeout:\n%s", screen)
	}
}
