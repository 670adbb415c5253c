package mcp

// Root is a directory or file the client exposes; URI is a file:// URI.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitzero"`
	Meta Meta   `json:"_meta,omitzero"`
}

// ListRootsResult is the client's answer to roots/list (params are RequestParams).
type ListRootsResult struct {
	Roots []Root `json:"roots"`
	Meta  Meta   `json:"_meta,omitzero"`
}
