package client

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsontok"
	"github.com/mcpkit/mcpkit/mcp"
)

// Extensions (SEP-2133): the client declares the extensions it supports
// in capabilities.extensions (Options.Extensions), reads the server's
// (ServerExtension), and calls the requests and notifications an
// extension defines (CallMethod, Notify). See docs/design/extensions.md.

// encodeExtensions encodes Options.Extensions: each value must encode as
// a JSON object (nil: {}).
func encodeExtensions(in map[string]any) (map[string]jsontext.Value, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]jsontext.Value, len(in))
	for id, v := range in {
		if !strings.Contains(id, "/") {
			return nil, fmt.Errorf("client: Options.Extensions: %q is not an extension id (prefix/name)", id)
		}
		raw := jsontext.Value("{}")
		if v != nil {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("client: Options.Extensions[%q]: %w", id, err)
			}
			if jsontext.Value(b).Kind() != '{' {
				return nil, fmt.Errorf("client: Options.Extensions[%q]: settings must encode as a JSON object", id)
			}
			raw = b
		}
		out[id] = raw
	}
	return out, nil
}

// ServerExtension returns the settings the server advertised for
// extension id (capabilities.extensions: from initialize on a legacy
// connection, from the last server/discover on a modern one), and whether
// it advertised it.
func (c *Client) ServerExtension(id string) (jsontext.Value, bool) {
	v, ok := c.ServerCapabilities().Extensions[id]
	return v, ok
}

// CallMethod sends an extension request (a method the server registered
// with server.AddMethod, say) with params (any value that encodes as a
// JSON object, or nil) and decodes its result into Out. On a modern
// connection the request carries the _meta envelope and its result is
// checked like any other; a _meta member of params is kept.
func CallMethod[Out any](ctx context.Context, c *Client, method string, params any) (Out, error) {
	var out Out
	p, err := newExtParams(method, params)
	if err != nil {
		return out, err
	}
	if err := c.call(ctx, method, p, &p.Meta, &out); err != nil {
		return out, err
	}
	return out, nil
}

// Notify sends an extension notification to the server, with params
// (any value that encodes as a JSON object, or nil). On a modern
// connection it carries the _meta envelope.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	if method == "" || strings.HasPrefix(method, "notifications/") && isCoreNotification(method) {
		return fmt.Errorf("client: Notify: %q is not an extension notification", method)
	}
	p, err := newExtParams(method, params)
	if err != nil {
		return err
	}
	if c.Era() == EraModern {
		c.mu.Lock()
		version := c.version
		c.mu.Unlock()
		env := c.newEnvelope(&p.Meta, p.Meta, version, c.tasksDeclared(ctx))
		overrideCaps(ctx, &env, c.tasksDeclared(ctx))
		p.Meta = env.asMap()
	}
	return c.notifyOut(ctx, method, p)
}

func isCoreNotification(method string) bool {
	switch method {
	case mcp.NotificationInitialized, mcp.NotificationCancelled, mcp.NotificationProgress,
		mcp.NotificationRootsListChanged:
		return true
	}
	return false
}

// extParams are the params of an extension request: the caller's object
// with _meta lifted out, so that the envelope can be added to it.
type extParams struct {
	Meta mcp.Meta
	body []byte // the other members, as one object
}

func newExtParams(method string, params any) (*extParams, error) {
	p := &extParams{body: []byte("{}")}
	if params == nil {
		return p, nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("client: encoding %s params: %w", method, err)
	}
	if jsontext.Value(b).Kind() != '{' {
		return nil, fmt.Errorf("client: %s params must encode as a JSON object", method)
	}
	var members map[string]jsontext.Value
	if err := json.Unmarshal(b, &members); err != nil {
		return nil, fmt.Errorf("client: encoding %s params: %w", method, err)
	}
	if m, ok := members["_meta"]; ok {
		if err := json.Unmarshal(m, &p.Meta); err != nil {
			return nil, fmt.Errorf("client: %s params: _meta: %w", method, err)
		}
		delete(members, "_meta")
		p.Meta = maps.Clone(p.Meta)
	}
	if p.body, err = json.Marshal(members, json.Deterministic(true)); err != nil {
		return nil, fmt.Errorf("client: encoding %s params: %w", method, err)
	}
	return p, nil
}

// MarshalJSONTo writes the caller's members, then _meta when set.
func (p *extParams) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	if err := jsontok.WriteMembers(enc, p.body); err != nil {
		return err
	}
	if len(p.Meta) > 0 {
		if err := enc.WriteToken(jsontext.String("_meta")); err != nil {
			return err
		}
		if err := p.Meta.MarshalJSONTo(enc); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}
