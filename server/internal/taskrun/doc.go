// Package taskrun runs the tasks of the protocol server: the table of
// the tasks this process runs (Manager), their start, run loop and
// settling over a store.TaskStore, input rounds (a 2025-11-25 task's
// requests on a tasks/result request in flight, a 2026 task's answers
// by tasks/update), the lease and heartbeat that let other instances
// fail a task whose owner died, the work shared with other instances
// (borrowed tasks/result requests, remote cancel/update/result,
// watchers of other instances' tasks), the notification queue of a
// 2025-11-25 task, and Shutdown.
//
// Package server owns a Manager (one per Server, created in New) and
// keeps only the hand-off: it builds the task's Request, runs the tool
// handler for the Manager (Job), renders the era's answers and sends
// notifications on its sessions and listen streams (Host). The rules
// that need no running task stay in server/internal/tasks.
//
// It must not import server, server/streamhttp or any carrier; it
// imports only mcp, jsonrpc, store, server/internal/seam and
// server/internal/tasks.
package taskrun
