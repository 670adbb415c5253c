package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// PathTasks is the endpoint of WT, the task lifecycle (benchserver
// -cluster): sessionful legacy, with the task-capable "quick" tool.
const PathTasks = "/mcp-tasks"

// MaxTaskPolls bounds the tasks/get polls of one WT cycle: a task still
// working after that many is an error, not a hang.
const MaxTaskPolls = 1000

var (
	// TaskCall is a 2025-11-25 tools/call of "quick" asking for a task.
	TaskCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"quick","arguments":{"text":"` + Text + `"},"task":{"ttl":60000}}}`)
	taskOK   = []byte(`"status":"completed"`)
)

// TaskIDBody is a request for method (tasks/get or tasks/result) of task id.
func TaskIDBody(method, id string) []byte {
	b, _ := json.Marshal(id) // a JSON string, escaped
	return []byte(`{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":{"taskId":` + string(b) + `}}`)
}

// TaskLifecycle runs one WT cycle with do, which sends a body on the
// session: the task-augmented tools/call, tasks/get until the task is
// completed, then tasks/result, whose answer must carry the echoed text.
// It returns the number of tasks/get polls.
func TaskLifecycle(do func(body []byte) (int, []byte, error)) (int, error) {
	st, body, err := do(TaskCall)
	if err != nil {
		return 0, fmt.Errorf("tools/call as a task: %w", err)
	}
	var created struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
				Status string `json:"status"`
			} `json:"task"`
		} `json:"result"`
	}
	if st != 200 || json.Unmarshal(body, &created) != nil || created.Result.Task.TaskID == "" {
		return 0, fmt.Errorf("tools/call as a task: status %d: %s", st, Trim(string(body)))
	}
	id := created.Result.Task.TaskID
	polls := 0
	for done := false; !done; {
		if polls++; polls > MaxTaskPolls {
			return polls, fmt.Errorf("task %s still not completed after %d polls", id, MaxTaskPolls)
		}
		st, body, err = do(TaskIDBody("tasks/get", id))
		if err != nil {
			return polls, fmt.Errorf("tasks/get: %w", err)
		}
		if st != 200 || bytes.Contains(body, rpcError) || !bytes.Contains(body, []byte(id)) {
			return polls, fmt.Errorf("tasks/get: status %d: %s", st, Trim(string(body)))
		}
		done = bytes.Contains(body, taskOK)
		if !done && (bytes.Contains(body, []byte(`"status":"failed"`)) || bytes.Contains(body, []byte(`"status":"cancelled"`))) {
			return polls, fmt.Errorf("tasks/get: task ended: %s", Trim(string(body)))
		}
	}
	st, body, err = do(TaskIDBody("tasks/result", id))
	if err != nil {
		return polls, fmt.Errorf("tasks/result: %w", err)
	}
	if err := Check(st, body); err != nil {
		return polls, fmt.Errorf("tasks/result: %w", err)
	}
	return polls, nil
}

// TaskCycle is one WT cycle on session sid of this connection; it returns
// the number of tasks/get polls.
func (c *Conn) TaskCycle(w Workload, sid string, deadline time.Time) (int, error) {
	hs := append([][2]string{{"Mcp-Session-Id", sid}}, w.Headers...)
	return TaskLifecycle(func(body []byte) (int, []byte, error) {
		return c.Do(BuildRequest(c.addr, w.Path, hs, body), deadline)
	})
}
