package apps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/mcp"
)

// ErrNoUI is returned by FetchUI for a tool that links no view.
var ErrNoUI = errors.New("apps: the tool has no view")

// Declare adds the extension, with MIMEType, to o.Extensions: the client
// then declares that it renders views, in initialize and in every
// 2026-07-28 request.
func Declare(o *client.Options) {
	if o.Extensions == nil {
		o.Extensions = make(map[string]any, 1)
	}
	o.Extensions[ExtensionID] = ClientSettings{MIMETypes: []string{MIMEType}}
}

// Supported reports whether the server advertises the extension
// (modern connections: as of the last server/discover).
func Supported(c *client.Client) bool {
	_, ok := c.ServerExtension(ExtensionID)
	return ok
}

// ToolUI returns the view settings of tool t (_meta.ui, or the flat
// "ui/resourceUri" of earlier drafts), and whether it links a view.
func ToolUI(t *mcp.Tool) (ToolMeta, bool) {
	var tm ToolMeta
	if metaUI(t.Meta, &tm) && tm.ResourceURI != "" {
		return tm, true
	}
	var uri string
	if ok, err := t.Meta.Get(deprecatedToolKey, &uri); ok && err == nil && uri != "" {
		return ToolMeta{ResourceURI: uri}, true
	}
	return ToolMeta{}, false
}

// VisibleTo reports whether who (VisibleToModel or VisibleToApp) may see
// and call the tool: an empty visibility list means both.
func (m ToolMeta) VisibleTo(who string) bool {
	if len(m.Visibility) == 0 {
		return true
	}
	for _, v := range m.Visibility {
		if v == who {
			return true
		}
	}
	return false
}

// UI is a fetched view.
type UI struct {
	URI  string
	HTML string
	// Meta is the view's _meta.ui as its contents carry it; zero when
	// they carry none (FetchUI reads only the contents, not the
	// resources/list entry; AddResource puts it on both).
	Meta ResourceMeta
}

// FetchUI reads the view tool t links (resources/read of its
// resourceUri) and checks it: a ui:// URI and MIMEType contents, as text
// or blob. A tool without a view is ErrNoUI.
func FetchUI(ctx context.Context, c *client.Client, t *mcp.Tool) (*UI, error) {
	tm, ok := ToolUI(t)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoUI, t.Name)
	}
	if !strings.HasPrefix(tm.ResourceURI, Scheme) {
		return nil, fmt.Errorf("apps: tool %s links %q, not a %s URI", t.Name, tm.ResourceURI, Scheme)
	}
	res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: tm.ResourceURI})
	if err != nil {
		return nil, fmt.Errorf("apps: reading the view of %s: %w", t.Name, err)
	}
	for _, rc := range res.Contents {
		if rc.ResourceURI() != tm.ResourceURI {
			continue
		}
		ui := &UI{URI: tm.ResourceURI}
		var mime string
		var meta mcp.Meta
		switch v := rc.(type) {
		case *mcp.TextResourceContents:
			mime, meta, ui.HTML = v.MIMEType, v.Meta, v.Text
		case *mcp.BlobResourceContents:
			mime, meta, ui.HTML = v.MIMEType, v.Meta, string(v.Blob) // decoded from base64 already
		}
		if mime != MIMEType {
			return nil, fmt.Errorf("apps: the view %s is %q, not %s", tm.ResourceURI, mime, MIMEType)
		}
		metaUI(meta, &ui.Meta)
		return ui, nil
	}
	return nil, fmt.Errorf("apps: reading the view of %s: no contents for %s", t.Name, tm.ResourceURI)
}
