package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// sideConn wraps a stdio client's transport so that inspect can ask the
// server one question of the other era on the same process — initialize
// on a modern connection, server/discover on a legacy one — instead of
// launching the command a second time. Its requests carry ids the client
// never uses (strings with sideIDPrefix); their answers are taken off the
// stream before the client reads it. A server serving both eras from one
// process (as mcpkit's does) answers; one that does not answers an error,
// which is as telling.
type sideConn struct {
	transport.Conn
	mu      sync.Mutex
	next    int
	waiting map[string]chan *sideAnswer
}

// sideAnswer is what the side channel reads of a message.
type sideAnswer struct {
	ID     jsontext.Value `json:"id"`
	Method string         `json:"method"`
	Result jsontext.Value `json:"result"`
	Error  *jsonrpc.Error `json:"error"`
}

const sideIDPrefix = "mcpkit-cli-side-"

func newSideConn(c transport.Conn) *sideConn {
	return &sideConn{Conn: c, waiting: make(map[string]chan *sideAnswer)}
}

// Read passes every message to the client but the answers to ask.
func (s *sideConn) Read(ctx context.Context) ([]byte, error) {
	for {
		b, err := s.Conn.Read(ctx)
		if err != nil || !s.deliver(b) {
			return b, err
		}
	}
}

// deliver hands b to the ask waiting for it, if b answers one.
func (s *sideConn) deliver(b []byte) bool {
	s.mu.Lock()
	n := len(s.waiting)
	s.mu.Unlock()
	if n == 0 {
		return false
	}
	var m sideAnswer
	if json.Unmarshal(b, &m, json.RejectUnknownMembers(false)) != nil || m.Method != "" {
		return false
	}
	var id string
	if json.Unmarshal(m.ID, &id) != nil {
		return false
	}
	s.mu.Lock()
	ch, ok := s.waiting[id]
	delete(s.waiting, id)
	s.mu.Unlock()
	if ok {
		ch <- &m // buffered
	}
	return ok
}

// ask sends one request and waits for its answer while the client keeps
// reading the connection (it must be connected: its reader delivers the
// answer).
func (s *sideConn) ask(ctx context.Context, method string, params any, result any) error {
	s.mu.Lock()
	s.next++
	id := sideIDPrefix + strconv.Itoa(s.next)
	ch := make(chan *sideAnswer, 1)
	s.waiting[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiting, id)
		s.mu.Unlock()
	}()
	req, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return err
	}
	if err := s.Conn.Write(ctx, transport.Message{Data: req}); err != nil {
		return err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return m.Error
		}
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("decoding the %s result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: no answer: %w", method, context.Cause(ctx))
	}
}

// legacyRevision asks the server to initialize a legacy session on the
// same process and returns the revision it chose (the session is never
// used: no notifications/initialized follows).
func (s *sideConn) legacyRevision(ctx context.Context) (string, error) {
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	err := s.ask(ctx, mcp.MethodInitialize, map[string]any{
		"protocolVersion": mcp.LatestLegacy,
		"capabilities":    map[string]any{},
		"clientInfo":      cliInfo,
	}, &res)
	if err == nil && res.ProtocolVersion == "" {
		err = errors.New("initialize answered without a protocolVersion")
	}
	return res.ProtocolVersion, err
}

// discover asks the server for server/discover on the same process.
func (s *sideConn) discover(ctx context.Context) (*mcp.DiscoverResult, error) {
	var res mcp.DiscoverResult
	err := s.ask(ctx, mcp.MethodServerDiscover, map[string]any{"_meta": map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.Latest,
		mcp.MetaKeyClientCapabilities: map[string]any{},
		mcp.MetaKeyClientInfo:         cliInfo,
	}}, &res)
	return &res, err
}
