package streamable

import (
	"bytes"
	"context"
	"errors"
	"hash/maphash"
	"net/http"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/mcpheader"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// SEP-2243 request metadata headers of the 2026-07-28 transport.
const (
	headerMethod = "Mcp-Method"
	headerName   = "Mcp-Name"
)

// modernRequest is what the Conn knows of a request that carries a
// 2026-07-28 envelope (params._meta["io.modelcontextprotocol/protocolVersion"]):
// such a request is sent without session headers, with the request
// metadata headers, and its stream is never resumed; closing the stream
// cancels it.
type modernRequest struct {
	version string // the envelope's revision, sent as MCP-Protocol-Version
	name    string // Mcp-Name: params.name (tools/call, prompts/get), params.uri (resources/read) or params.taskId (tasks/*)
	hasName bool
}

// protocolVersionKey appears in every modern envelope; its absence is a
// cheap proof that a message is legacy.
var protocolVersionKey = []byte(mcp.MetaKeyProtocolVersion)

// modernOf returns the modern envelope of request m, and false when it
// has none (legacy traffic, notifications, responses). What the writer said
// of it (known, from transport.Message.Modern) is taken as is; otherwise
// the params are decoded.
func modernOf(m *jsonrpc.Message, known transport.Modern) (modernRequest, bool) {
	if !m.IsRequest() {
		return modernRequest{}, false
	}
	if known.Version != "" {
		return modernRequest{version: known.Version, name: known.Name, hasName: known.HasName}, true
	}
	if m.Params.Kind() != '{' || !bytes.Contains(m.Params, protocolVersionKey) {
		return modernRequest{}, false
	}
	var p struct {
		Meta struct {
			Version jsontext.Value `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
		Name   jsontext.Value `json:"name"`
		URI    jsontext.Value `json:"uri"`
		TaskID jsontext.Value `json:"taskId"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return modernRequest{}, false
	}
	var r modernRequest
	if p.Meta.Version.Kind() != '"' || json.Unmarshal(p.Meta.Version, &r.version) != nil || r.version == "" {
		return modernRequest{}, false
	}
	var src jsontext.Value
	switch m.Method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		src = p.Name
	case mcp.MethodResourcesRead:
		src = p.URI
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		src = p.TaskID // the tasks extension (SEP-2663)
	}
	if src.Kind() == '"' && json.Unmarshal(src, &r.name) == nil {
		r.hasName = true
	}
	return r, true
}

// setModernHeaders puts the request metadata headers of a modern request
// on req: MCP-Protocol-Version (the envelope's revision), Mcp-Method and,
// for tools/call, prompts/get, resources/read and the tasks extension's
// tasks/get, tasks/update and tasks/cancel, Mcp-Name.
func (c *Conn) setModernHeaders(req *http.Request, m *jsonrpc.Message, mr *modernRequest) {
	req.Header[canonicalProtocolVersion] = versionValue(mr.version)
	req.Header[headerMethod] = methodValue(m.Method)
	if mr.hasName {
		req.Header[headerName] = c.nameValue(mr.name)
	}
}

// nameSlots is the size of a Conn's table of Mcp-Name header values.
const nameSlots = 16

// nameEntry is one Mcp-Name header value, for name.
type nameEntry struct {
	name  string
	value [1]string
}

// nameSeed hashes names into a Conn's table.
var nameSeed = maphash.MakeSeed()

// nameValue returns the Mcp-Name header's value for name: shared by the
// requests that name it (see valueJSON) while it holds its slot of the
// Conn's table, which a name hashing to the same slot takes over. A
// client calling the same few tools builds each value once; the table
// holds nameSlots values at most.
func (c *Conn) nameValue(name string) []string {
	slot := &c.names[maphash.String(nameSeed, name)%nameSlots]
	if e := slot.Load(); e != nil && e.name == name {
		return e.value[:]
	}
	e := &nameEntry{name: name}
	e.value[0] = mcpheader.Encode(name)
	slot.Store(e)
	return e.value[:]
}

// methodValues are the Mcp-Method header's values of the everyday
// methods, shared (see valueJSON).
var methodValues = map[string][]string{}

func init() {
	for _, m := range []string{mcp.MethodToolsCall, mcp.MethodToolsList, mcp.MethodResourcesRead, mcp.MethodResourcesList,
		mcp.MethodPromptsGet, mcp.MethodPromptsList, mcp.MethodServerDiscover} {
		methodValues[m] = []string{m}
	}
}

// methodValue returns the Mcp-Method header's value for method.
func methodValue(method string) []string {
	if vs, ok := methodValues[method]; ok {
		return vs
	}
	return []string{method}
}

// addMessageHeaders adds the headers of a written message
// (transport.Message.Header), each value encoded as SEP-2243 says (base64 when it is not plain ASCII).
func addMessageHeaders(req *http.Request, hs []transport.Header) {
	for _, h := range hs {
		req.Header.Add(h.Name, mcpheader.Encode(h.Value))
	}
}

// modernStream is what postStream needs of a modern request's stream: the
// call's context, whose end cancels the request (stop detaches that), and
// the POST's own context.
type modernStream struct {
	call context.Context
	req  context.Context
	stop func() bool
	// legacy marks a 2025-11-25 request sent without a session: cancelled
	// like a modern one, by closing its stream, but resumed like a
	// legacy one.
	legacy bool
}

// cancelled reports whether the stream was closed on the client's behalf:
// the call's context ended, or notifications/cancelled named the request.
func (ms *modernStream) cancelled() bool {
	return ms.call.Err() != nil || errors.Is(context.Cause(ms.req), errCancelled)
}

// errCancelled is the cause of a modern request's POST closed because the
// client sent notifications/cancelled for it.
var errCancelled = errors.New("streamable: request cancelled by the client")

func (c *Conn) trackModern(id mcp.ID, cancel context.CancelCauseFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.modern == nil {
		c.modern = make(map[mcp.ID]context.CancelCauseFunc)
	}
	c.modern[id] = cancel
}

func (c *Conn) untrackModern(id mcp.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.modern, id)
}

// cancelModern handles notifications/cancelled on the 2026-07-28 wire,
// where an HTTP client sends no notifications and cancels a request by
// closing its stream (SEP-2575). When the notification names a modern
// request in flight (or a legacy one sent without a session, which a
// server can hear no other way), the Conn closes that request's POST,
// and reports true: the notification is not sent. It also reports true, without
// sending anything, while no legacy session was begun (no initialize was
// sent): only modern requests can be in flight then (or finished, when
// the cancellation raced their answer). Otherwise (legacy traffic) it
// reports false and the notification is POSTed as usual.
func (c *Conn) cancelModern(m *jsonrpc.Message) bool {
	var p struct {
		RequestID mcp.ID `json:"requestId"`
	}
	if json.Unmarshal(m.Params, &p) != nil || !p.RequestID.IsValid() {
		return false
	}
	c.mu.Lock()
	cancel, inFlight := c.modern[p.RequestID]
	sawInit := c.sawInit
	c.mu.Unlock()
	if inFlight {
		cancel(errCancelled)
		return true
	}
	return !sawInit
}
