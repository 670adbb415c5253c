package apps

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// Resource is a view: one HTML document served as a ui:// resource.
type Resource struct {
	// URI names the view; it must begin with ui://.
	URI string
	// Name and Description describe it in resources/list.
	Name        string
	Title       string
	Description string
	// HTML is the document (a complete HTML5 document: the host renders
	// it in a sandboxed iframe).
	HTML string
	// Meta is its security and rendering settings (_meta.ui).
	Meta ResourceMeta
}

// Enable advertises the extension in the server's capabilities (both
// eras). AddResource does it too.
func Enable(s *server.Server) error {
	return s.AddExtension(ExtensionID, nil)
}

// AddResource registers the view r as a resource of s, served as
// MIMEType with its _meta.ui on both the list entry and the contents,
// and advertises the extension. A URI without the ui:// scheme, an empty
// name, empty HTML or a CSP source that is not an origin (CSP.Validate:
// 'unsafe-inline', javascript:, a bare *, a ';' ...) is an error
// starting with "apps:" that names the view, and registers nothing.
func AddResource(s *server.Server, r *Resource) error {
	switch {
	case r == nil:
		return errors.New("apps: AddResource: nil resource")
	case !strings.HasPrefix(r.URI, Scheme) || len(r.URI) == len(Scheme):
		return fmt.Errorf("apps: AddResource %q: a view's URI must begin with %s", r.URI, Scheme)
	case r.Name == "":
		return fmt.Errorf("apps: AddResource %q: the view needs a name", r.URI)
	case r.HTML == "":
		return fmt.Errorf("apps: AddResource %q: the view has no HTML", r.URI)
	}
	if err := r.Meta.CSP.Validate(); err != nil {
		return fmt.Errorf("apps: AddResource %q: %w", r.URI, err)
	}
	meta := mcp.Meta{metaKey: r.Meta}
	res := &mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: MIMEType, Meta: meta}
	contents := &mcp.TextResourceContents{URI: r.URI, MIMEType: MIMEType, Text: r.HTML, Meta: meta}
	if err := Enable(s); err != nil {
		return fmt.Errorf("apps: AddResource %q: %w", r.URI, err)
	}
	err := s.AddResource(res, func(context.Context, *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{contents}}, nil
	})
	if err != nil {
		return fmt.Errorf("apps: AddResource %q: %w", r.URI, err)
	}
	return nil
}

// Link points tool t at the view uri (_meta.ui.resourceUri), before t is
// registered. visibility (VisibleToModel, VisibleToApp) limits who may
// call it; none means both. Other _meta members of t are kept.
func Link(t *mcp.Tool, uri string, visibility ...string) error {
	if t == nil {
		return errors.New("apps: Link: nil tool")
	}
	if !strings.HasPrefix(uri, Scheme) || len(uri) == len(Scheme) {
		return fmt.Errorf("apps: Link %q: a view's URI must begin with %s", t.Name, Scheme)
	}
	for _, v := range visibility {
		if v != VisibleToModel && v != VisibleToApp {
			return fmt.Errorf("apps: Link %q: unknown visibility %q", t.Name, v)
		}
	}
	m := make(mcp.Meta, len(t.Meta)+1)
	for k, v := range t.Meta {
		m[k] = v
	}
	m[metaKey] = ToolMeta{ResourceURI: uri, Visibility: slices.Clone(visibility)}
	t.Meta = m
	return nil
}

// ClientSupports reports whether the client of req renders views: it
// declared the extension with MIMEType among its mimeTypes. Handlers use
// it to fall back to text for clients that do not.
func ClientSupports(req *server.Request) bool {
	raw, ok := req.ClientExtension(ExtensionID)
	return ok && rendersHTML(raw)
}

func rendersHTML(raw jsontext.Value) bool {
	var cs ClientSettings
	if metaUI(mcp.Meta{metaKey: raw}, &cs) {
		return slices.Contains(cs.MIMETypes, MIMEType)
	}
	return false
}
