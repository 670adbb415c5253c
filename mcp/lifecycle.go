package mcp

// Implementation identifies a client or server.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitzero"`
	Version string `json:"version"`
	// Description, WebsiteURL and Icons are 2025-11-25+.
	Description string `json:"description,omitzero"`
	WebsiteURL  string `json:"websiteUrl,omitzero"`
	Icons       []Icon `json:"icons,omitempty"`
}

// Icon themes of Icon.Theme.
const (
	IconThemeLight = "light"
	IconThemeDark  = "dark"
)

// Icon is an image for display (2025-11-25+).
type Icon struct {
	// Src is an https: or data: URI.
	Src      string `json:"src"`
	MIMEType string `json:"mimeType,omitzero"`
	// Sizes lists sizes such as "48x48" or "any".
	Sizes []string `json:"sizes,omitempty"`
	// Theme is IconThemeLight, IconThemeDark or empty.
	Theme string `json:"theme,omitzero"`
}

// InitializeParams are the params of initialize (legacy revisions).
type InitializeParams struct {
	Meta            Meta               `json:"_meta,omitzero"`
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
}

// InitializeResult is the result of initialize (legacy revisions).
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	// Instructions tell the model how to use the server.
	Instructions string `json:"instructions,omitzero"`
	Meta         Meta   `json:"_meta,omitzero"`
}

// DiscoverResult is the result of server/discover (2026-07-28); the request
// params are RequestParams. The server identity travels in
// Meta[MetaKeyServerInfo].
type DiscoverResult struct {
	ResultType ResultType `json:"resultType,omitzero"`
	// SupportedVersions lists the revisions the server serves.
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitzero"`
	TTLMs             *int64             `json:"ttlMs,omitzero"`
	CacheScope        CacheScope         `json:"cacheScope,omitzero"`
	Meta              Meta               `json:"_meta,omitzero"`
}

// Clone returns a deep copy of i (its icons and their sizes are new).
func (i Implementation) Clone() Implementation {
	if i.Icons != nil {
		icons := make([]Icon, len(i.Icons))
		for n, ic := range i.Icons {
			ic.Sizes = append([]string(nil), ic.Sizes...)
			icons[n] = ic
		}
		i.Icons = icons
	}
	return i
}

// ValidSessionID reports whether id may be a legacy session id: not
// empty, and visible ASCII only (0x21 to 0x7E), as the Streamable HTTP
// transport requires of the Mcp-Session-Id a server assigns.
func ValidSessionID(id string) bool {
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}
