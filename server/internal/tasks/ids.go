package tasks

import (
	"crypto/rand"
	"strings"

	"github.com/mcpkit/mcpkit/store"
)

// NewID returns a fresh task id naming the instance that owns it:
// "task-<instance>-<130 random bits>". Where no principal or session
// binds the task, the random part is its only capability (BoundTo).
func NewID(instance string) string { return "task-" + instance + "-" + rand.Text() }

// OwnerOf returns the instance a task id names (NewID), or "".
func OwnerOf(id string) string {
	rest, ok := strings.CutPrefix(id, "task-")
	if !ok {
		return ""
	}
	owner, _, ok := strings.Cut(rest, "-")
	if !ok {
		return ""
	}
	return owner
}

// BoundTo reports whether rec answers to a request acting for principal
// on the legacy session sessionID ("" without one): the principal it
// was created for when there was one, on any session of that
// principal; else the legacy session that created it; a task created
// with neither answers to whoever names it.
func BoundTo(rec *store.TaskRecord, principal, sessionID string) bool {
	if rec.Principal != principal {
		return false
	}
	return principal != "" || rec.SessionID == sessionID
}
