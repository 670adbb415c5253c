package wirecheck

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// Directions of a message, for Observe.
const (
	ClientToServer = "client->server"
	ServerToClient = "server->client"
)

// Observe returns a function to attach to a transport (or a recording of
// one) that checks every message it is given, in order, and reports each
// failure with t.Errorf, quoting the message. dir is ClientToServer or
// ServerToClient.
//
// Requests and notifications are checked with Check, plus the direction:
// the method must be one that side sends (ClientRequest/ClientNotification
// for a client, ServerRequest/ServerNotification for a server). The id of
// each request is remembered per direction, so the response that comes back
// the other way is checked with CheckResponse against that request: a
// response whose id matches no pending request (e.g. a string id answering a
// numeric one) is a failure too. The function is safe for concurrent use;
// it must not be called after the test has finished.
//
// On a nil Checker (For without the schemas) the function does nothing.
func (c *Checker) Observe(t testing.TB) func(dir string, msg []byte) {
	if c == nil {
		return func(string, []byte) {}
	}
	o := &observer{c: c, t: t, pending: map[string]map[string]*envelope{
		ClientToServer: {},
		ServerToClient: {},
	}}
	return o.observe
}

type observer struct {
	c       *Checker
	t       testing.TB
	mu      sync.Mutex
	pending map[string]map[string]*envelope // request direction → id key → request
}

func (o *observer) observe(dir string, msg []byte) {
	o.t.Helper()
	o.mu.Lock()
	err := o.check(dir, msg)
	o.mu.Unlock()
	if err != nil {
		o.t.Errorf("wirecheck: %s message does not conform to MCP %s: %v\n\tmessage: %s", dir, o.c.revision, err, clip(msg))
	}
}

func (o *observer) check(dir string, msg []byte) error {
	var other string
	switch dir {
	case ClientToServer:
		other = ServerToClient
	case ServerToClient:
		other = ClientToServer
	default:
		return fmt.Errorf("unknown direction %q (want %q or %q)", dir, ClientToServer, ServerToClient)
	}
	if isBatch(msg) {
		return o.c.checkBatch(msg, func(m []byte) error { return o.check(dir, m) })
	}
	env, err := parseEnvelope(msg)
	if err != nil {
		return err
	}
	switch env.kind {
	case kindRequest, kindNotification:
		errs := []error{o.c.Check(msg)}
		if env.kind == kindRequest {
			key := env.idKey()
			if _, dup := o.pending[dir][key]; dup {
				errs = append(errs, fmt.Errorf("request id %s is already in use by a pending request", env.id))
			}
			o.pending[dir][key] = env
		}
		sends, side := o.c.clientSends, "clients"
		if dir == ServerToClient {
			sends, side = o.c.serverSends, "servers"
		}
		if !sends[env.method] && (o.c.requests[env.method] != "" || o.c.notifications[env.method] != "") {
			errs = append(errs, fmt.Errorf("%s do not send %q in revision %s", side, env.method, o.c.revision))
		}
		return errors.Join(errs...)
	}
	if env.nullID() {
		if env.kind == kindError {
			return o.c.Check(msg) // e.g. a parse error: it answers no request
		}
		return errors.Join(errors.New("result response without an id"), o.c.Check(msg))
	}
	req, ok := o.pending[other][env.idKey()]
	if !ok {
		return errors.Join(fmt.Errorf("response id %s matches no pending request sent %s", env.id, other), o.c.Check(msg))
	}
	delete(o.pending[other], env.idKey())
	return o.c.checkResult(req.method, req.taskAugmented(), msg)
}

// clip shortens a message for a failure report.
func clip(msg []byte) string {
	const max = 2000
	v := jsontext.Value(msg)
	if c := v.Clone(); c.Compact() == nil {
		v = c
	}
	if len(v) > max {
		return string(v[:max]) + "…"
	}
	return string(v)
}
