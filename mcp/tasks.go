package mcp

import "github.com/go-json-experiment/json/jsontext"

// ExtensionTasks is the id of the 2026 tasks extension (SEP-2663), the key
// of ClientCapabilities.Extensions and ServerCapabilities.Extensions.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// TaskMetadata asks for task-augmented execution of a request (2025-11-25).
type TaskMetadata struct {
	// TTL is the requested retention in milliseconds.
	TTL *int64 `json:"ttl,omitzero"`
}

// TaskStatus is the state of a task.
type TaskStatus string

// Task states; completed, failed and cancelled are terminal.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether s is completed, failed or cancelled.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is the 2025-11-25 task state. It is also the result of tasks/get and
// tasks/cancel and the params of notifications/tasks/status, which add Meta.
// The 2026 tasks extension renames ttl and pollInterval: see TaskInfo.
type Task struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitzero"`
	// CreatedAt and LastUpdatedAt are ISO 8601 timestamps.
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTL is the retention in milliseconds; nil encodes as null (unlimited).
	TTL *int64 `json:"ttl"`
	// PollInterval suggests a polling period in milliseconds.
	PollInterval *int64 `json:"pollInterval,omitzero"`
	Meta         Meta   `json:"_meta,omitzero"`
}

// CreateTaskResult answers a task-augmented request (2025-11-25).
type CreateTaskResult struct {
	Task Task `json:"task"`
	Meta Meta `json:"_meta,omitzero"`
}

// TaskIDParams are the params of tasks/get, tasks/result and tasks/cancel.
type TaskIDParams struct {
	Meta   Meta   `json:"_meta,omitzero"`
	TaskID string `json:"taskId"`
}

// ListTasksResult is the result of tasks/list; its params are PaginatedParams.
type ListTasksResult struct {
	Tasks []Task `json:"tasks"`
	// NextCursor is nil on the last page.
	NextCursor *string `json:"nextCursor,omitzero"`
	Meta       Meta    `json:"_meta,omitzero"`
}

// RelatedTaskMetadata is the value at MetaKeyRelatedTask.
type RelatedTaskMetadata struct {
	TaskID string `json:"taskId"`
}

// ListTasksParams are the params of tasks/list (2025-11-25).
type ListTasksParams = PaginatedParams

// TaskInfo is a task as the 2026 tasks extension (io.modelcontextprotocol/tasks)
// sends it: the 2025 Task with ttlMs and pollIntervalMs.
type TaskInfo struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitzero"`
	// CreatedAt and LastUpdatedAt are ISO 8601 timestamps.
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTLMs is the retention in milliseconds; nil encodes as null (unlimited).
	TTLMs *int64 `json:"ttlMs"`
	// PollIntervalMs suggests a polling period in milliseconds.
	PollIntervalMs *int64 `json:"pollIntervalMs,omitzero"`
}

// CreatedTaskResult answers a tools/call the server runs as a task under
// the 2026 tasks extension: Result & Task, flattened, with ResultType
// ResultTask.
type CreatedTaskResult struct {
	Meta       Meta       `json:"_meta,omitzero"`
	ResultType ResultType `json:"resultType"`
	TaskInfo
}

// TaskError is the JSON-RPC error a failed task settled with.
type TaskError struct {
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data,omitzero"`
}

// DetailedTask is the result of tasks/get under the 2026 tasks extension
// and the params of its notifications/tasks: the task with what its status
// carries — InputRequests when input_required, Result (the request's own
// result) when completed, Error when failed.
type DetailedTask struct {
	Meta       Meta       `json:"_meta,omitzero"`
	ResultType ResultType `json:"resultType,omitzero"`
	TaskInfo
	InputRequests InputRequests  `json:"inputRequests,omitempty"`
	Result        jsontext.Value `json:"result,omitzero"`
	Error         *TaskError     `json:"error,omitzero"`
}

// UpdateTaskParams are the params of tasks/update (2026 tasks extension):
// answers to a task's input requests, by key.
type UpdateTaskParams struct {
	Meta           Meta           `json:"_meta,omitzero"`
	TaskID         string         `json:"taskId"`
	InputResponses InputResponses `json:"inputResponses"`
}
