// Package expiry is a queue of keys ordered by deadline, soonest first:
// what an in-memory store with time-to-live entries sweeps, so that a
// sweep looks only at the entries whose time has come (O(log n) each)
// instead of at every entry. It is shared by store's MemoryTaskStore and
// auth's MemoryReplayCache. Not safe for concurrent use: its owner holds
// its own lock.
//
// It imports no other mcpkit package.
package expiry
