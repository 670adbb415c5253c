package mcp

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

// Task is the 2025-11-25 task state. It is also the result of tasks/get and
// tasks/cancel and the params of notifications/tasks/status, which add Meta.
// The 2026 tasks extension is out of scope here.
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
