package server

import (
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/store"
)

// TestEraTables pins the per-era rules that are plain tables: the HTTP
// status of an error, the tasks/* methods of each revision, the versions
// each era serves, and the round trip of a task's era through its record.
func TestEraTables(t *testing.T) {
	codes := []int64{mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMethodNotFound, mcp.CodeInvalidParams, mcp.CodeInternalError}
	modernStatus := []int{http.StatusBadRequest, http.StatusBadRequest, http.StatusBadRequest, http.StatusNotFound, http.StatusOK, http.StatusOK}
	for i, c := range codes {
		e := jsonrpc.NewError(c, "x")
		if got := eraLegacy.httpStatus(e); got != http.StatusOK {
			t.Errorf("legacy httpStatus(%d) = %d, want 200", c, got)
		}
		if got := eraModern.httpStatus(e); got != modernStatus[i] {
			t.Errorf("modern httpStatus(%d) = %d, want %d", c, got, modernStatus[i])
		}
	}

	methods := []string{mcp.MethodTasksGet, mcp.MethodTasksCancel, mcp.MethodTasksUpdate, mcp.MethodTasksResult, mcp.MethodTasksList, mcp.MethodToolsCall}
	for _, tc := range []struct {
		era     era
		version string
		want    []bool // in the order of methods
	}{
		{eraLegacy, mcp.Version20251125, []bool{true, true, false, true, true, false}},
		{eraLegacy, mcp.Version20250618, []bool{false, false, false, false, false, false}},
		{eraModern, mcp.Version20260728, []bool{true, true, true, false, false, false}},
	} {
		for i, m := range methods {
			if got := tc.era.tasks().HasMethod(tc.version, m); got != tc.want[i] {
				t.Errorf("%T.hasTaskMethod(%s, %s) = %v, want %v", tc.era, tc.version, m, got, tc.want[i])
			}
		}
	}

	for id, e := range eras {
		if got := taskEra(&store.TaskRecord{Modern: e.tasks().Modern()}); got != taskActs[id] {
			t.Errorf("taskEra of a %T task = %T", e, got)
		}
		if got := (&Request{eraID: eraID(id)}).taskActions(); got != taskActs[id] {
			t.Errorf("Request.taskActions of a %T request = %T", e, got)
		}
	}
}
