// Package group is a client for many MCP servers at once: a Group
// connects to several servers, each over its own transport and with its
// own client.Options (so each negotiates its own era), lists their tools,
// prompts, resources and resource templates as one set under namespaced
// names, and routes a call by that name to the server it came from.
//
//	g, err := group.Connect(ctx, []group.Server{
//		{Name: "files", Connect: dialFiles},
//		{Name: "search", Connect: dialSearch, Client: &client.Options{ProtocolVersion: mcp.LatestLegacy}},
//	}, nil)
//	defer g.Close()
//	for tool, err := range g.Tools(ctx) { … } // tool.Name is "files_read", "search_query", …
//	res, err := g.CallTool(ctx, &mcp.CallToolParams{Name: "files_read", Arguments: args})
//
// Names. A namespaced name is the server's prefix (Server.Prefix, by
// default its Name), the group's separator (Options.Separator, "_" by
// default) and the name the server gave. Connect refuses prefixes that
// could make two pairs spell the same string (a prefix holding the
// separator, ending with the start of it, or used twice), so collisions
// are impossible by construction and Split recovers the server and the
// original name from any namespaced one. Resource URIs and URI templates
// are namespaced the same way; a template expanded by the caller still
// carries its prefix.
//
// Failures are per server. Connect returns a Group even when some servers
// could not be reached; Servers reports each one's state and last error.
// The merged iterators yield one *ServerError for each server that fails
// (down, or failing part-way through its list) and go on with the others.
// A server that is down is connected again when it is next used, no
// sooner than its retry time (Options.RetryMin doubling up to
// Options.RetryMax after each failed attempt); the Group runs no
// background reconnection loop. Calls are never repeated by the Group.
//
// List changes from every server (in the legacy era the notifications a
// server sends unasked, in the modern era those of a subscriptions/listen
// stream the Group opens) reach one callback, Options.OnListChanged,
// with the server's name.
//
// Package group is a layer above package client and uses only its public
// API. It imports client, mcp and transport; it must not import server or
// any concrete transport (the caller's Connect functions choose those).
package group
