package mcptest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// Script answers the input requests of a server — elicitation/create,
// sampling/createMessage, roots/list — the way a person and a model at
// the client would, from answers given in advance: in a legacy pair they
// answer the server's requests, in a modern one the input requests of
// input-required results (the client repeats the call with them). The
// same script gives the same results in both eras.
//
// Elicitation and sampling answers are consumed in order, one per
// question; a question with no answer left fails the test, and so do
// answers left over when the test ends. Roots are one list, given at
// every roots/list. Each kind is declared as a client capability once
// any of its methods has been called, before NewPair.
//
// A Script belongs to one Pair; its methods are safe for concurrent use.
type Script struct {
	mu        sync.Mutex
	t         testing.TB
	elicit    []*mcp.ElicitResult        // nil: elicitation not declared
	sample    []*mcp.CreateMessageResult // nil: sampling not declared
	roots     *mcp.ListRootsResult       // nil: roots not declared
	elicited  []*mcp.ElicitParams
	sampled   []*mcp.CreateMessageParams
	rootsSeen int
}

// Elicit adds answers to the elicitations to come, in order, and
// declares elicitation (form mode; URL mode too when
// Options.Client.ElicitationURL is set).
func (s *Script) Elicit(answers ...*mcp.ElicitResult) *Script {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.elicit = append(nonNil(s.elicit), answers...)
	return s
}

// CreateMessage adds answers to the sampling requests to come, in order,
// and declares sampling.
func (s *Script) CreateMessage(answers ...*mcp.CreateMessageResult) *Script {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sample = append(nonNil(s.sample), answers...)
	return s
}

// ListRoots sets the roots given at every roots/list and declares roots.
func (s *Script) ListRoots(roots ...mcp.Root) *Script {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roots = &mcp.ListRootsResult{Roots: append([]mcp.Root{}, roots...)}
	return s
}

// ElicitRequests returns the elicitations asked so far, in order.
func (s *Script) ElicitRequests() []*mcp.ElicitParams {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*mcp.ElicitParams(nil), s.elicited...)
}

// CreateMessageRequests returns the sampling requests asked so far, in order.
func (s *Script) CreateMessageRequests() []*mcp.CreateMessageParams {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*mcp.CreateMessageParams(nil), s.sampled...)
}

// ListRootsRequests returns how many times the roots were asked for.
func (s *Script) ListRootsRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rootsSeen
}

// Accept is an elicitation answer that accepts the form with content.
func Accept(content map[string]any) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: mcp.ElicitActionAccept, Content: content}
}

// Decline is an elicitation answer that declines.
func Decline() *mcp.ElicitResult { return &mcp.ElicitResult{Action: mcp.ElicitActionDecline} }

// Cancel is an elicitation answer that cancels (the user dismissed it).
func Cancel() *mcp.ElicitResult { return &mcp.ElicitResult{Action: mcp.ElicitActionCancel} }

// Reply is a sampling answer: the assistant's text, from model.
func Reply(model, text string) *mcp.CreateMessageResult {
	return &mcp.CreateMessageResult{
		Role:       mcp.RoleAssistant,
		Content:    mcp.NewSamplingContent(&mcp.TextContent{Text: text}),
		Model:      model,
		StopReason: "endTurn",
	}
}

// errUnscripted is a handler's error for a question the script has no
// answer for; the test has failed already.
var errUnscripted = errors.New("mcptest: no scripted answer")

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// install sets the client's handlers for what the script declares. A nil
// Script installs nothing.
func (s *Script) install(t testing.TB, co *client.Options) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.t != nil {
		return errors.New("mcptest: a Script belongs to one Pair")
	}
	s.t = t
	if s.elicit != nil {
		if co.ElicitHandler != nil {
			return errors.New("mcptest: Options.Script and Options.Client.ElicitHandler both answer elicitations")
		}
		co.ElicitHandler = s.answerElicit
	}
	if s.sample != nil {
		if co.CreateMessageHandler != nil {
			return errors.New("mcptest: Options.Script and Options.Client.CreateMessageHandler both answer sampling")
		}
		co.CreateMessageHandler = s.answerCreateMessage
	}
	if s.roots != nil {
		if co.ListRootsHandler != nil {
			return errors.New("mcptest: Options.Script and Options.Client.ListRootsHandler both answer roots/list")
		}
		co.ListRootsHandler = s.answerListRoots
	}
	t.Cleanup(s.leftOver)
	return nil
}

func (s *Script) answerElicit(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.elicited = append(s.elicited, p)
	if len(s.elicit) == 0 {
		s.t.Errorf("mcptest: elicitation %d (%q) has no scripted answer", len(s.elicited), p.Message)
		return nil, errUnscripted
	}
	a := s.elicit[0]
	s.elicit = s.elicit[1:]
	return a, nil
}

func (s *Script) answerCreateMessage(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sampled = append(s.sampled, p)
	if len(s.sample) == 0 {
		s.t.Errorf("mcptest: sampling request %d has no scripted answer", len(s.sampled))
		return nil, errUnscripted
	}
	a := s.sample[0]
	s.sample = s.sample[1:]
	return a, nil
}

func (s *Script) answerListRoots(context.Context) (*mcp.ListRootsResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rootsSeen++
	r := *s.roots
	r.Roots = append([]mcp.Root(nil), s.roots.Roots...)
	return &r, nil
}

// leftOver fails the test for answers no question used.
func (s *Script) leftOver() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.elicit); n > 0 {
		s.t.Errorf("mcptest: %d scripted elicitation answer(s) left unused (%d asked)", n, len(s.elicited))
	}
	if n := len(s.sample); n > 0 {
		s.t.Errorf("mcptest: %d scripted sampling answer(s) left unused (%d asked)", n, len(s.sampled))
	}
}
