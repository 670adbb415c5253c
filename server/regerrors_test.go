package server

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport/memory"
)

// recordLog is a slog handler that keeps every record.
type recordLog struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *recordLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.recs = append(h.recs, r.Clone())
	h.mu.Unlock()
	return nil
}
func (h *recordLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordLog) WithGroup(string) slog.Handler      { return h }

// registrationLogs returns the "err" attribute of every Error record
// about a failed registration.
func (h *recordLog) registrationLogs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.recs {
		if r.Level != slog.LevelError || !strings.Contains(r.Message, "registration failed") {
			continue
		}
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "err" {
				out = append(out, a.Value.String())
			}
			return true
		})
	}
	return out
}

// failingRegistrations makes one registration of each kind fail and one
// succeed, and returns the errors the calls returned.
func failingRegistrations(s *Server) []error {
	errs := []error{
		AddTool[struct{}, struct{}](s, &mcp.Tool{Name: "typed"}, nil),
		s.AddRawTool(&mcp.Tool{Name: "raw", InputSchema: []byte(`[]`)}, func(context.Context, *CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil }),
		s.AddPrompt(&mcp.Prompt{}, nil),
		s.AddResource(&mcp.Resource{URI: "file:///x"}, nil),
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "x://{"}, func(context.Context, *ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil }),
		s.AddExtension("no-slash", nil),
		AddMethod[struct{}, struct{}](s, mcp.MethodToolsCall, nil),
		AddNotification[struct{}](s, "", nil),
	}
	if err := s.AddPrompt(&mcp.Prompt{Name: "fine"}, func(context.Context, *GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil }); err != nil {
		panic(err)
	}
	return errs
}

// TestErrKeepsRegistrationErrors: every failed Add* is in Server.Err, in
// order, and a server whose registrations all succeeded has none.
func TestErrKeepsRegistrationErrors(t *testing.T) {
	if err := New(nil).Err(); err != nil {
		t.Fatalf("a fresh server: Err = %v", err)
	}
	s := New(nil)
	errs := failingRegistrations(s)
	err := s.Err()
	if err == nil {
		t.Fatal("Err = nil after failed registrations")
	}
	var msgs []string
	for i, e := range errs {
		if e == nil {
			t.Fatalf("registration %d did not fail", i)
		}
		if !errors.Is(err, e) {
			t.Errorf("Err does not hold %v", e)
		}
		msgs = append(msgs, e.Error())
	}
	if got, want := err.Error(), strings.Join(msgs, "\n"); got != want {
		t.Errorf("Err =\n%s\nwant\n%s", got, want)
	}
}

// TestRegistrationErrorsLoggedWhenServing: nothing is logged while the
// server is being set up; the first session logs every error once, a
// second session logs nothing more, and a registration that fails while
// serving is logged at once.
func TestRegistrationErrorsLoggedWhenServing(t *testing.T) {
	h := &recordLog{}
	s := New(&Options{Logger: slog.New(h)})
	errs := failingRegistrations(s)
	if got := h.registrationLogs(); len(got) != 0 {
		t.Fatalf("logged before serving: %q", got)
	}
	for range 2 {
		a, b := memory.NewPair()
		ss := s.Connect(a)
		ss.Close()
		b.Close()
		_ = ss.Wait()
	}
	got := h.registrationLogs()
	if len(got) != len(errs) {
		t.Fatalf("logged %d registration errors, want %d: %q", len(got), len(errs), got)
	}
	for i, e := range errs {
		if got[i] != e.Error() {
			t.Errorf("log %d: err=%q, want %q", i, got[i], e.Error())
		}
	}
	late := s.AddResource(nil, nil)
	got = h.registrationLogs()
	if len(got) != len(errs)+1 || got[len(got)-1] != late.Error() {
		t.Fatalf("a registration failing while serving: logs %q, want %q last", got, late)
	}
}

// TestRegistrationErrorsLoggedByHTTPHandler: building the Streamable HTTP
// handler on the server starts serving, so it logs them too.
func TestRegistrationErrorsLoggedByHTTPHandler(t *testing.T) {
	h := &recordLog{}
	s := New(&Options{Logger: slog.New(h)})
	err := s.AddPrompt(nil, nil)
	hh := NewTestHTTPHandler(s, nil)
	defer hh.Close()
	if got := h.registrationLogs(); len(got) != 1 || got[0] != err.Error() {
		t.Fatalf("logs %q, want [%q]", got, err)
	}
}

// TestRegistrationErrorsBounded: the server keeps at most
// Options.MaxRegistrationErrors errors (default
// DefaultMaxRegistrationErrors) and counts the rest, so registrations
// that keep failing (a gateway's faulty upstream) cannot grow it without
// end; each is still logged once serving.
func TestRegistrationErrorsBounded(t *testing.T) {
	h := &recordLog{}
	s := New(&Options{Logger: slog.New(h), MaxRegistrationErrors: 2})
	for range 5 {
		_ = s.AddPrompt(nil, nil)
	}
	err := s.Err()
	if got := strings.Count(err.Error(), "nil prompt"); got != 2 {
		t.Errorf("Err holds %d errors, want 2: %v", got, err)
	}
	if !strings.Contains(err.Error(), "server: 3 more registration errors, beyond Options.MaxRegistrationErrors (2)") {
		t.Errorf("Err does not count the rest: %v", err)
	}
	a, b := memory.NewPair()
	ss := s.Connect(a)
	_ = s.AddPrompt(nil, nil) // while serving: logged at once
	ss.Close()
	b.Close()
	_ = ss.Wait()
	if got := len(h.registrationLogs()); got != 3 {
		t.Errorf("%d registration errors logged, want 2 kept and 1 while serving", got)
	}
	summary := false
	h.mu.Lock()
	for _, r := range h.recs {
		summary = summary || strings.Contains(r.Message, "more registrations failed")
	}
	h.mu.Unlock()
	if !summary {
		t.Error("the errors beyond the bound were not logged as a count")
	}

	d := New(nil)
	for range DefaultMaxRegistrationErrors + 1 {
		_ = d.AddPrompt(nil, nil)
	}
	if got := strings.Count(d.Err().Error(), "nil prompt"); got != DefaultMaxRegistrationErrors {
		t.Errorf("default: Err holds %d errors, want %d", got, DefaultMaxRegistrationErrors)
	}
}
