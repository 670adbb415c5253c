package client

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/transport"
)

// outEnvelope is the modern per-request metadata of one request, as data:
// written into params._meta as bytes, in a fixed order, without a map
// (docs/design/client-envelope.md). With interceptors, which see and may
// change params._meta, it becomes the mcp.Meta map instead (asMap).
type outEnvelope struct {
	meta    *mcp.Meta // the params' own _meta field
	caller  mcp.Meta  // the caller's keys (progressToken…), kept
	version string
	caps    jsontext.Value
	info    jsontext.Value
	level   mcp.LoggingLevel // SetLoggingLevel's level; the caller's own wins
}

// newEnvelope reads what the envelope of a request in revision version
// carries (under mu: the Set…Handler methods change the capabilities).
func (c *Client) newEnvelope(meta *mcp.Meta, caller mcp.Meta, version string, tasks bool) outEnvelope {
	e := outEnvelope{meta: meta, caller: caller, version: version, info: c.infoJSON}
	c.mu.Lock()
	e.caps = c.capsJSON
	if tasks {
		e.caps = c.capsTasksJSON
	}
	e.level = c.logLevel
	c.mu.Unlock()
	if _, set := caller[mcp.MetaKeyLogLevel]; set {
		e.level = ""
	}
	return e
}

// asMap returns the envelope as the map interceptors see: a copy of the
// caller's keys with the envelope's.
func (e *outEnvelope) asMap() mcp.Meta {
	m := make(mcp.Meta, len(e.caller)+4)
	maps.Copy(m, e.caller)
	m[mcp.MetaKeyProtocolVersion] = e.version
	m[mcp.MetaKeyClientInfo] = e.info
	m[mcp.MetaKeyClientCapabilities] = e.caps
	if e.level != "" {
		m[mcp.MetaKeyLogLevel] = e.level
	}
	return m
}

// route is what the transport is told of the request (its SEP-2243
// headers), so that it need not decode it again: the revision and, for
// the methods whose Mcp-Name the client knows from its params type, the
// name. A request whose name it cannot tell is left to the transport.
func (e *outEnvelope) route(method string, params any) transport.Modern {
	if r, ok := params.(*retryParams); ok {
		params = r.base
	}
	var name string
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet, mcp.MethodResourcesRead,
		mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		switch p := params.(type) {
		case *mcp.CallToolParams:
			name = p.Name
		case *mcp.GetPromptParams:
			name = p.Name
		case *mcp.ReadResourceParams:
			name = p.URI
		default:
			return transport.Modern{}
		}
		return transport.Modern{Version: e.version, Name: name, HasName: true}
	}
	return transport.Modern{Version: e.version}
}

// envelopeBufs holds the buffers enveloped.MarshalJSONTo assembles in.
var envelopeBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledEnvelope: a buffer that grew beyond it (a large argument) is
// not kept.
const maxPooledEnvelope = 64 << 10

// encode returns the request's params with the envelope written first
// into params._meta, as bytes the transport sends verbatim (a
// requestState among them keeps the server's escapes). The params are
// encoded with their _meta field nil (omitted: exchange clears it while
// the request is written), then spliced after it. The keys come in a
// fixed order: protocolVersion, clientCapabilities, clientInfo, logLevel
// (when the client sets one), then the caller's in sorted order.
//
// The bytes live in out, a pooled buffer the caller hands back with
// putEnvelopeBuf once the request is encoded (jsonrpc copies them).
//
// checked reports that the bytes are valid by construction, so that
// jsonrpc need not walk them again (wire.Checked): the params are the
// everyday tools/call ones AppendPlainCall wrote (a name and arguments
// it checked, no _meta of their own), and every part of the envelope is
// an encoder's output. Other params may hold a "_meta" of their own (a
// caller's jsontext.Value, a type of an extension), which the check
// refuses as a duplicate name.
func (e *outEnvelope) encode(params any) (_ jsontext.Value, out *bytes.Buffer, checked bool, _ error) {
	out = envelopeBufs.Get().(*bytes.Buffer)
	body := envelopeBufs.Get().(*bytes.Buffer)
	defer putEnvelopeBuf(body)
	var raw []byte
	done := false
	switch v := params.(type) {
	case jsontext.Value:
		raw, done = v, true
	case *mcp.CallToolParams:
		// The everyday params (a name and arguments) as the reflective
		// encoder writes them (TestAppendPlainCall in rpccodec holds it).
		if b, ok := wire.AppendPlainCall(body.AvailableBuffer(), v); ok {
			body.Write(b) // into the pooled buffer, which keeps what it grew to
			raw, done, checked = body.Bytes(), true, true
		}
	}
	if !done {
		if err := json.MarshalWrite(body, params); err != nil {
			return nil, out, false, err
		}
		raw = body.Bytes()
	}
	if len(raw) < 2 || raw[0] != '{' {
		return nil, out, false, fmt.Errorf("client: params encode as %.40s, not an object", raw)
	}
	out.WriteString(`{"_meta":{"` + mcp.MetaKeyProtocolVersion + `":`)
	b, err := jsontext.AppendQuote(out.AvailableBuffer(), e.version)
	if err != nil {
		return nil, out, false, err
	}
	out.Write(b)
	out.WriteString(`,"` + mcp.MetaKeyClientCapabilities + `":`)
	out.Write(e.caps)
	out.WriteString(`,"` + mcp.MetaKeyClientInfo + `":`)
	out.Write(e.info)
	if e.level != "" {
		out.WriteString(`,"` + mcp.MetaKeyLogLevel + `":`)
		b, err := jsontext.AppendQuote(out.AvailableBuffer(), string(e.level))
		if err != nil {
			return nil, out, false, err
		}
		out.Write(b)
	}
	if len(e.caller) > 0 {
		if err := writeCallerMeta(out, e.caller, e.level != ""); err != nil {
			return nil, out, false, err
		}
	}
	out.WriteByte('}')
	if rest := bytes.TrimLeft(raw[1:], " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
		out.WriteByte(',')
		out.Write(rest)
	} else {
		out.WriteByte('}')
	}
	return out.Bytes(), out, checked, nil
}

// putEnvelopeBuf returns a buffer of encode to the pool (nil: none).
func putEnvelopeBuf(b *bytes.Buffer) {
	if b != nil && b.Cap() <= maxPooledEnvelope {
		b.Reset()
		envelopeBufs.Put(b)
	}
}

// writeCallerMeta writes the caller's _meta keys, sorted, except those of
// the envelope, which the client sets, and the log level when the
// envelope wrote one (leveled): so that the bytes never hold a key twice,
// whatever the envelope was built from (they are handed on as checked).
func writeCallerMeta(out *bytes.Buffer, caller mcp.Meta, leveled bool) error {
	for _, k := range slices.Sorted(maps.Keys(caller)) {
		switch k {
		case mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities:
			continue
		case mcp.MetaKeyLogLevel:
			if leveled {
				continue
			}
		}
		out.WriteByte(',')
		b, err := jsontext.AppendQuote(out.AvailableBuffer(), k)
		if err != nil {
			return err
		}
		out.Write(b)
		out.WriteByte(':')
		if err := json.MarshalWrite(out, caller[k]); err != nil {
			return fmt.Errorf("client: encoding _meta[%q]: %w", k, err)
		}
	}
	return nil
}
