package client

import (
	"bytes"
	"errors"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// identity is the server's identity (io.modelcontextprotocol/serverInfo)
// as the client first learned it: from a server/discover result, or,
// when the client made none (a pinned Options.ProtocolVersion), from the
// first result that carried one. A 2026-07-28 server SHOULD repeat it in
// the _meta of every result; the client leaves that repetition out of the
// results it decodes when it is byte for byte the known identity, so that
// a result whose _meta holds nothing else costs no map
// (docs/design/client-envelope.md, "The result's _meta"). Client.ServerInfo
// reports it; a result naming another identity keeps it in its Meta.
type identity struct {
	value jsontext.Value // the serverInfo value, as received
	only  []byte         // {"io.modelcontextprotocol/serverInfo":value}: a _meta of nothing else
}

func newIdentity(v jsontext.Value) *identity {
	id := &identity{value: bytes.Clone(v)}
	id.only = append(append([]byte(`{"`+mcp.MetaKeyServerInfo+`":`), id.value...), '}')
	return id
}

// setIdentity records the identity of a server/discover result.
func (c *Client) setIdentity(res *mcp.DiscoverResult) {
	if res == nil {
		return
	}
	if v, ok := res.Meta[mcp.MetaKeyServerInfo].(jsontext.Value); ok && v.IsValid() {
		c.identity.Store(newIdentity(v))
	}
}

// decodeResultMeta decodes a modern result's own _meta (the member of the
// top level) with the known identity left out; a _meta of nothing else
// is nil. Other _meta objects (a content block's) decode as usual. It is
// the unmarshaler of c.resultOpts.
func (c *Client) decodeResultMeta(dec *jsontext.Decoder, m *mcp.Meta) error {
	if dec.StackDepth() != 1 {
		return errors.ErrUnsupported // decoded as usual
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return c.resultMeta(raw, m)
}

// resultMeta is decodeResultMeta from the raw _meta object.
func (c *Client) resultMeta(raw []byte, m *mcp.Meta) error {
	id := c.identity.Load()
	if id != nil && bytes.Equal(raw, id.only) {
		*m = nil
		return nil
	}
	var out mcp.Meta
	if err := json.Unmarshal(raw, &out); err != nil {
		return err
	}
	if v, ok := out[mcp.MetaKeyServerInfo].(jsontext.Value); ok {
		if id == nil && c.identity.CompareAndSwap(nil, newIdentity(v)) {
			id = c.identity.Load()
		}
		if id != nil && bytes.Equal(v, id.value) {
			delete(out, mcp.MetaKeyServerInfo)
			if len(out) == 0 {
				out = nil
			}
		}
	}
	*m = out
	return nil
}

// decodeMeta returns the decoder of a modern result's own _meta that
// matches decodeOpts(method): nil where that is nil.
func (c *Client) decodeMeta(method string) func([]byte, *mcp.Meta) error {
	if c.decodeOpts(method) == nil {
		return nil
	}
	return c.resultMetaFn
}

// decodeOpts returns the options a modern result of method is decoded
// with: nil for server/discover, whose _meta is the identity itself.
func (c *Client) decodeOpts(method string) json.Options {
	if method == mcp.MethodServerDiscover {
		return nil
	}
	return c.resultOpts
}

// learnedIdentity decodes the identity learned from results: the zero
// value when there is none.
func (c *Client) learnedIdentity() mcp.Implementation {
	var info mcp.Implementation
	if id := c.identity.Load(); id != nil && json.Unmarshal(id.value, &info) != nil {
		return mcp.Implementation{}
	}
	return info
}
