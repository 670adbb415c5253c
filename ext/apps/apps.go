package apps

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

const (
	// ExtensionID identifies MCP Apps in capabilities.extensions.
	ExtensionID = "io.modelcontextprotocol/ui"
	// MIMEType is the media type of an HTML view.
	MIMEType = "text/html;profile=mcp-app"
	// Scheme begins every view's URI.
	Scheme = "ui://"
	// metaKey is the _meta member of views, their contents and tools.
	metaKey = "ui"
	// deprecatedToolKey is the flat tool _meta key that earlier drafts
	// used for the view's URI; ToolUI still reads it.
	deprecatedToolKey = "ui/resourceUri"
)

// The values of ToolMeta.Visibility.
const (
	// VisibleToModel: the tool is in the model's tool list.
	VisibleToModel = "model"
	// VisibleToApp: views of this server may call the tool.
	VisibleToApp = "app"
)

// CSP lists the origins a view may reach; hosts build the view's Content
// Security Policy from it and allow nothing undeclared. Empty lists are
// the restrictive defaults.
type CSP struct {
	// ConnectDomains: fetch, XHR and WebSocket (connect-src).
	ConnectDomains []string `json:"connectDomains,omitempty"`
	// ResourceDomains: scripts, styles, images, fonts, media.
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	// FrameDomains: nested iframes (frame-src).
	FrameDomains []string `json:"frameDomains,omitempty"`
	// BaseURIDomains: base-uri.
	BaseURIDomains []string `json:"baseUriDomains,omitempty"`
}

// Permissions are the browser capabilities a view asks for; hosts may
// grant them (iframe allow attribute). On the wire each is an empty
// object when requested.
type Permissions struct {
	Camera         bool
	Microphone     bool
	Geolocation    bool
	ClipboardWrite bool
}

type wirePermissions struct {
	Camera         *struct{} `json:"camera,omitzero"`
	Microphone     *struct{} `json:"microphone,omitzero"`
	Geolocation    *struct{} `json:"geolocation,omitzero"`
	ClipboardWrite *struct{} `json:"clipboardWrite,omitzero"`
}

func flag(b bool) *struct{} {
	if b {
		return &struct{}{}
	}
	return nil
}

// MarshalJSON encodes the requested permissions as empty objects.
func (p Permissions) MarshalJSON() ([]byte, error) {
	return json.Marshal(wirePermissions{flag(p.Camera), flag(p.Microphone), flag(p.Geolocation), flag(p.ClipboardWrite)})
}

// UnmarshalJSON decodes permissions: a member present is requested.
func (p *Permissions) UnmarshalJSON(b []byte) error {
	var w wirePermissions
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = Permissions{w.Camera != nil, w.Microphone != nil, w.Geolocation != nil, w.ClipboardWrite != nil}
	return nil
}

// ResourceMeta is a view's _meta.ui: security and rendering settings,
// sent on the resources/list entry and on the resources/read contents.
type ResourceMeta struct {
	CSP         *CSP         `json:"csp,omitzero"`
	Permissions *Permissions `json:"permissions,omitzero"`
	// Domain asks for a dedicated sandbox origin (host-specific format).
	Domain string `json:"domain,omitzero"`
	// PrefersBorder asks for (true) or against (false) a visible border;
	// nil leaves it to the host.
	PrefersBorder *bool `json:"prefersBorder,omitzero"`
}

// ToolMeta is a tool's _meta.ui: the view that renders its results and
// who may call it.
type ToolMeta struct {
	// ResourceURI is the ui:// URI of the tool's view.
	ResourceURI string `json:"resourceUri,omitzero"`
	// Visibility lists VisibleToModel and/or VisibleToApp; empty means
	// both.
	Visibility []string `json:"visibility,omitempty"`
}

// ClientSettings are the client's settings of the extension: the view
// types it renders.
type ClientSettings struct {
	MIMETypes []string `json:"mimeTypes,omitempty"`
}

// metaUI decodes the "ui" member of m into v; ok is false when there is
// none or it does not decode.
func metaUI(m mcp.Meta, v any) bool {
	raw, ok := m[metaKey]
	if !ok {
		return false
	}
	b, isRaw := raw.(jsontext.Value)
	if !isRaw {
		var err error
		if b, err = json.Marshal(raw); err != nil {
			return false
		}
	}
	return json.Unmarshal(b, v) == nil
}
