package tasks

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// The operations of PeerMsg: what one instance asks of another about a
// task (server/internal/taskrun runs them).
const (
	OpStatus = "status" // broadcast: the task's record changed
	OpCancel = "cancel" // to the owner: cancel the handler
	OpUpdate = "update" // to the owner: answers for the task (tasks/update)
	OpLend   = "lend"   // to the owner: a tasks/result request may carry input requests
	OpReturn = "return" // to the owner: that request ended
	OpAsk    = "ask"    // to the lender: send this input request on the lent request
	OpNotify = "notify" // to the lender: send this notification on the lent request
)

// PeerMsg is one message about a task between the instances of a
// deployment, as JSON (carried by server/internal/seam's Peers). Its
// member names are a wire between instances of different builds: keep
// them.
type PeerMsg struct {
	Op        string             `json:"op"`
	Task      string             `json:"task"`
	From      string             `json:"from,omitzero"`
	Tag       string             `json:"tag,omitzero"`
	Responses mcp.InputResponses `json:"responses,omitzero"`
	Request   *mcp.InputRequest  `json:"request,omitzero"`
	Form      jsontext.Value     `json:"form,omitzero"`
	Method    string             `json:"method,omitzero"` // OpNotify
	Params    jsontext.Value     `json:"params,omitzero"` // OpNotify
	// Record is, on an OpStatus of a task that became terminal, its
	// record as stored (taskrun's encoding), so that the other instances
	// answer it without reading the store; absent for a large record.
	Record jsontext.Value `json:"record,omitzero"`
	// Note, with the Record of a 2025-11-25 task, asks every instance to
	// send notifications/tasks/status on the task's session's standalone
	// stream if it holds it: the owner then forwards none (one message
	// to the other instances instead of two).
	Note bool `json:"note,omitzero"`
}

// PeerReply is the answer to a PeerMsg.
type PeerReply struct {
	Result jsontext.Value `json:"result,omitzero"`
	Error  *mcp.TaskError `json:"error,omitzero"`
	// Gone: what the message named is not here (no such run or lent
	// request).
	Gone bool `json:"gone,omitzero"`
}
