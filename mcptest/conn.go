package mcptest

import (
	"context"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wirecheck"
	"github.com/mcpkit/mcpkit/transport"
)

// observedConn is the client's end of the pair: every message it writes
// is checked as client→server before it leaves (so the check knows the
// request before its response can come back), every message it reads as
// server→client.
//
// Messages of methods the revision does not define — extension requests
// and notifications (server.AddMethod, client.CallMethod) — and the
// responses to those requests are not the schema's to judge: they pass
// unchecked.
type observedConn struct {
	transport.Conn
	checker *wirecheck.Checker
	observe func(dir string, msg []byte) // nil: no checks

	mu   sync.Mutex
	skip map[string]bool // direction + id of extension requests in flight
}

func newObservedConn(c transport.Conn, checker *wirecheck.Checker, observe func(string, []byte)) *observedConn {
	return &observedConn{Conn: c, checker: checker, observe: observe, skip: make(map[string]bool)}
}

func (c *observedConn) Read(ctx context.Context) ([]byte, error) {
	msg, err := c.Conn.Read(ctx)
	if err == nil {
		c.check(wirecheck.ServerToClient, wirecheck.ClientToServer, msg)
	}
	return msg, err
}

func (c *observedConn) Write(ctx context.Context, m transport.Message) error {
	c.check(wirecheck.ClientToServer, wirecheck.ServerToClient, m.Data)
	return c.Conn.Write(ctx, m)
}

func (c *observedConn) check(dir, other string, msg []byte) {
	if c.observe == nil {
		return
	}
	var env struct {
		Method *string        `json:"method"`
		ID     jsontext.Value `json:"id"`
	}
	if json.Unmarshal(msg, &env, json.RejectUnknownMembers(false)) == nil {
		id := string(env.ID)
		c.mu.Lock()
		switch {
		case env.Method != nil && !c.checker.Defines(*env.Method):
			if id != "" {
				c.skip[dir+id] = true
			}
			c.mu.Unlock()
			return
		case env.Method == nil && c.skip[other+id]:
			delete(c.skip, other+id)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
	c.observe(dir, msg)
}
