// Package store holds the deployment seams of an MCP server: the
// interfaces through which several server instances share what one
// process would otherwise keep to itself, with the records they carry,
// their errors, and an in-memory implementation of each.
//
//   - SessionStore keeps the negotiated state of legacy HTTP sessions
//     (SessionState), so that any instance can serve a session's next
//     request.
//   - EventStore keeps the SSE events of legacy streams for resumption
//     with Last-Event-ID (2025-11-25 resumability, SEP-1699).
//   - Broker carries messages between instances: answers to
//     server→client requests, live streams, list changes, state changes.
//   - TaskStore keeps task records (TaskRecord) for the 2025-11-25 core
//     tasks and the 2026 io.modelcontextprotocol/tasks extension.
//
// The in-memory implementations (MemorySessionStore, MemoryEventStore,
// MemoryBus, MemoryTaskStore) serve one process, or several handlers in
// one process; the store/redis module implements the same interfaces on
// Redis for deployments of several processes.
//
// Package store is a leaf: it imports only the protocol vocabulary (mcp),
// internal/expiry (the in-memory task store's expiry queue) and
// internal/jsonwalk (the strict walk under the task records' fast
// encoding and reading), and never
// the server, the client or a transport, so that a store
// implementation depends on nothing that serves requests.
package store
