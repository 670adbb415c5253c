// Package tasks holds the task rules of the protocol server that need
// no server to decide: which tasks/* methods a revision has, whether a
// tools/call may become a task, a task's TTL, how a stored task is
// rendered in each era (the 2025-11-25 core tasks, the 2026
// io.modelcontextprotocol/tasks extension), who a task answers to, task
// ids and the instance they name, and the clock the task machinery
// reads.
//
// It owns rules as data in, answers out: package server asks a
// request's era for its Rules (Core or Extension) and hands them what
// they need (the revision, whether the extension was declared, a tool's
// task support). Running and storing tasks is server/internal/taskrun's;
// announcing them, server's.
//
// It must not import server, server/streamhttp or any carrier; it
// imports only mcp, jsonrpc, store and internal/revisions.
package tasks
