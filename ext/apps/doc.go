// Package apps implements MCP Apps, the io.modelcontextprotocol/ui
// extension (SEP-1865, stable 2026-01-26), on top of the SDK's extension
// support: servers serve interactive HTML views as ui:// resources
// (text/html;profile=mcp-app) with their Content Security Policy and
// permission metadata, and link tools to them through _meta.ui; clients
// declare the extension, find a tool's view and fetch it.
//
// Server side: AddResource registers a view and advertises the
// extension; Link points a tool at a view before it is registered;
// ClientSupports tells a handler whether the client renders views, so
// that it can fall back to text. Client side: Declare adds the extension
// to client.Options; Supported reports whether the server advertises it;
// ToolUI and FetchUI find and fetch a tool's view.
//
// A view's CSP lists must hold origins (https://api.example.com,
// wss://..., a subdomain wildcard https://*.example.com): AddResource
// refuses CSP keywords such as 'unsafe-inline', a bare *, other schemes
// (javascript:, data:, blob:) and anything that would add a source or a
// directive (whitespace, ';', ','), with an error naming the view, the
// field and the value; CSP.Validate is the check, for hosts too.
//
// Both protocol eras are served alike: the extension is declared in
// capabilities.extensions (initialize, or the per-request envelope and
// server/discover of 2026-07-28). See docs/design/extensions.md.
//
// Package apps imports server, client and mcp: the public API only.
package apps
