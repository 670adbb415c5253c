package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
)

// Tasks: long-running tool calls, the client's half, in both revisions.
//
//   - 2025-11-25 (experimental core tasks): the client asks for a task by
//     adding params.task to tools/call, when the server declares
//     tasks.requests.tools.call; the server answers with a CreateTaskResult
//     ({task}). tasks/get reads the task's state, tasks/result blocks until
//     it is over and answers what tools/call would have (its result or its
//     JSON-RPC error) while the server asks for input, if it needs any, with
//     ordinary elicitation and sampling requests (answered by the handlers of
//     Options), tasks/cancel cancels it and tasks/list lists tasks.
//   - 2026-07-28 (the extension io.modelcontextprotocol/tasks): a tools/call
//     whose client capabilities declare the extension may be answered with a
//     task (resultType "task", the task's fields at the top level); the
//     server decides. tasks/get answers the task with its outcome (result
//     when completed, error when failed) or, when it is input_required, its
//     input requests, which the client answers with tasks/update; tasks/cancel
//     asks for cancellation and answers an empty acknowledgement. There is
//     no tasks/result and no tasks/list; notifications/tasks arrive only
//     through Listen (mcp.SubscriptionFilter.TaskIDs).

// tasksExtension is the id of the 2026 tasks extension.
const tasksExtension = "io.modelcontextprotocol/tasks"

// DefaultTaskPollInterval is the default of Options.TaskPollInterval.
const DefaultTaskPollInterval = time.Second

// cancelTimeout bounds the tasks/cancel the client sends on its own for a
// task whose waiter gave up (see RunToolTask).
const cancelTimeout = 2 * time.Second

var (
	// ErrTasksUnsupported is returned by StartToolTask on a legacy
	// connection whose server did not declare tasks.requests.tools.call.
	ErrTasksUnsupported = errors.New("client: the server does not run tool calls as tasks")
	// ErrTaskCanceled is returned by TaskResult (2026-07-28) for a task
	// that ended cancelled.
	ErrTaskCanceled = errors.New("client: the task was cancelled")
	// ErrTaskFailed is returned by TaskResult (2026-07-28) for a task that
	// failed without a JSON-RPC error (a failed task's error is returned
	// as the *jsonrpc.Error it carries).
	ErrTaskFailed = errors.New("client: the task failed")
)

// Task is the state of a task the server runs for the client: a tool
// call run as a task, in either revision.
type Task struct {
	// ID is the server's taskId. It is empty in the Task of a
	// StartToolTask the server answered at once, without a task: Status
	// is then completed and Result holds the tool's result.
	ID     string
	Status mcp.TaskStatus
	// StatusMessage describes the status, for people.
	StatusMessage string
	// CreatedAt and LastUpdatedAt are ISO 8601 timestamps.
	CreatedAt     string
	LastUpdatedAt string
	// TTL is how long the server keeps the task after its creation, in
	// milliseconds (ttl in 2025-11-25, ttlMs in 2026-07-28); nil:
	// unlimited or not said.
	TTL *int64
	// PollInterval is the server's suggested polling period in
	// milliseconds (pollInterval, pollIntervalMs); nil: none.
	PollInterval *int64
	// InputRequests are the input requests of an input_required task
	// (2026-07-28 tasks/get; TaskResult answers them itself).
	InputRequests mcp.InputRequests
	// Result is the request's own result, as received, of a completed task
	// (2026-07-28 tasks/get, or a call answered without a task).
	Result jsontext.Value
	// Error is the JSON-RPC error of a failed task (2026-07-28 tasks/get).
	Error *jsonrpc.Error
	// Meta is the _meta of the result (for a 2025-11-25 CreateTaskResult,
	// such as io.modelcontextprotocol/model-immediate-response).
	Meta mcp.Meta

	raw   jsontext.Value // the result as received
	order []string       // the keys of InputRequests in the server's order
}

// taskWire reads a task in either revision's spelling.
type taskWire struct {
	Task           jsontext.Value `json:"task"` // 2025 CreateTaskResult
	TaskID         string         `json:"taskId"`
	Status         mcp.TaskStatus `json:"status"`
	StatusMessage  string         `json:"statusMessage"`
	CreatedAt      string         `json:"createdAt"`
	LastUpdatedAt  string         `json:"lastUpdatedAt"`
	TTL            *int64         `json:"ttl"`
	PollInterval   *int64         `json:"pollInterval"`
	TTLMs          *int64         `json:"ttlMs"`
	PollIntervalMs *int64         `json:"pollIntervalMs"`
	InputRequests  jsontext.Value `json:"inputRequests"`
	Result         jsontext.Value `json:"result"`
	Error          *jsonrpc.Error `json:"error"`
	Meta           mcp.Meta       `json:"_meta"`
}

// decodeTask reads a task: a 2025 CreateTaskResult or Task, or a 2026
// CreateTaskResult or DetailedTask.
func decodeTask(raw jsontext.Value) (*Task, error) {
	var w taskWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("client: decoding a task: %w", err)
	}
	meta := w.Meta
	if w.Task.Kind() == '{' {
		if err := json.Unmarshal(w.Task, &w); err != nil {
			return nil, fmt.Errorf("client: decoding a task: %w", err)
		}
		w.Meta = meta // the CreateTaskResult's
	}
	if w.TaskID == "" {
		return nil, errors.New("client: a task without a taskId")
	}
	t := &Task{
		ID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage,
		CreatedAt: w.CreatedAt, LastUpdatedAt: w.LastUpdatedAt,
		TTL: w.TTL, PollInterval: w.PollInterval,
		Result: w.Result, Error: w.Error, Meta: w.Meta, raw: raw,
	}
	if w.TTLMs != nil {
		t.TTL = w.TTLMs
	}
	if w.PollIntervalMs != nil {
		t.PollInterval = w.PollIntervalMs
	}
	if w.InputRequests.Kind() == '{' {
		if err := json.Unmarshal(w.InputRequests, &t.InputRequests); err != nil {
			return nil, fmt.Errorf("client: decoding the input requests of task %s: %w", t.ID, err)
		}
		t.order = keyOrder(w.InputRequests)
	}
	return t, nil
}

// taskStarted is what a modern tools/call that declared the tasks
// extension returns when the server answered with a task.
type taskStarted struct{ raw jsontext.Value }

func (e *taskStarted) Error() string { return "client: tools/call: the server runs the call as a task" }

type tasksKey struct{}

// tasksExt marks ctx: its modern requests declare the tasks extension.
func tasksExt(ctx context.Context) context.Context {
	return context.WithValue(ctx, tasksKey{}, true)
}

// tasksDeclared reports whether a modern request made with ctx declares
// the tasks extension.
func (c *Client) tasksDeclared(ctx context.Context) bool {
	return c.opts.Tasks || ctx.Value(tasksKey{}) != nil
}

// StartToolTask calls a tool as a task and returns the task as the
// server created it, without waiting for its outcome (see TaskResult,
// GetTask, CancelTask).
//
// Legacy (2025-11-25): the request carries p.Task (an empty one when nil:
// set TTL there to ask for a retention); a server that did not declare
// tasks.requests.tools.call is not asked (ErrTasksUnsupported).
//
// Modern (2026-07-28): the request declares the tasks extension, whether
// or not Options.Tasks is set, and p.Task (a 2025 field) is not sent. The
// server decides whether to run the call as a task.
//
// A server may answer at once instead (a 2026 server that chose to, a
// 2025 server that ignored params.task): the Task then has no ID, Status
// completed and Result the tool's result.
func (c *Client) StartToolTask(ctx context.Context, p *mcp.CallToolParams) (*Task, error) {
	p = orNew(p)
	var raw jsontext.Value
	if c.Era() != EraModern {
		if !c.init.Capabilities.Tasks.SupportsRequest(mcp.MethodToolsCall) {
			return nil, ErrTasksUnsupported
		}
		if p.Task == nil {
			p.Task = &mcp.TaskMetadata{}
		}
		if err := c.callTool(ctx, p, &raw); err != nil {
			return nil, err
		}
		if rawHasTask(raw) {
			return decodeTask(raw)
		}
		return &Task{Status: mcp.TaskCompleted, Result: raw, raw: raw}, nil
	}
	p.Task = nil
	err := c.callTool(tasksExt(ctx), p, &raw)
	var ts *taskStarted
	if errors.As(err, &ts) {
		return decodeTask(ts.raw)
	}
	if err != nil {
		return nil, err
	}
	return &Task{Status: mcp.TaskCompleted, Result: raw, raw: raw}, nil
}

// rawHasTask reports whether a 2025 tools/call result is a
// CreateTaskResult.
func rawHasTask(raw jsontext.Value) bool {
	var w struct {
		Task jsontext.Value `json:"task"`
	}
	return json.Unmarshal(raw, &w) == nil && w.Task.Kind() == '{'
}

// RunToolTask calls a tool as a task (StartToolTask) and waits for its
// outcome (TaskResult): the tool's result, a tool-level failure being a
// result with IsError set, or the error a plain call would have returned.
// A legacy server that does not run tool calls as tasks gets a plain call
// (without p.Task). When ctx ends before the task does, the client asks
// the server to cancel it (tasks/cancel) before returning ctx's error.
func (c *Client) RunToolTask(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if fn := progressFunc(ctx); fn != nil && c.Era() != EraModern {
		// A 2025-11-25 task reports progress with the call's token for
		// as long as it runs: the token stays registered until the
		// outcome, not only until the CreateTaskResult.
		cp := *orNew(p)
		cp.Meta = make(mcp.Meta, len(p.Meta)+1)
		for k, v := range p.Meta {
			cp.Meta[k] = v
		}
		token := mcp.StringID(randToken())
		cp.Meta[mcp.MetaKeyProgressToken] = token
		c.progress.Store(token, fn)
		defer c.progress.Delete(token)
		p, ctx = &cp, WithProgress(ctx, nil)
	}
	t, err := c.StartToolTask(ctx, p)
	if errors.Is(err, ErrTasksUnsupported) {
		cp := *p
		cp.Task = nil
		return c.CallTool(ctx, &cp)
	}
	if err != nil {
		return nil, err
	}
	return c.await(ctx, t)
}

// await waits for the outcome of a task nobody else holds the id of, and
// cancels it when ctx ends first.
func (c *Client) await(ctx context.Context, t *Task) (*mcp.CallToolResult, error) {
	if t.ID == "" {
		return toolResult(t)
	}
	fn := taskStatusFunc(ctx)
	if fn != nil {
		fn = onChange(fn)
		ctx = WithTaskStatus(ctx, fn)
		fn(t)
	}
	defer c.watchTask(t.ID, fn)()
	defer c.listenTask(ctx, t.ID, fn)()
	res, err := c.TaskResult(ctx, t.ID)
	if fn != nil && c.Era() != EraModern && ctx.Err() == nil && (err == nil || taskOutcome(err)) {
		// A 2025-11-25 tasks/result answers once the task is over: its
		// result says completed, its JSON-RPC error failed. Any other
		// error (the connection is gone) tells nothing of the task.
		end := &Task{ID: t.ID, Status: mcp.TaskCompleted}
		if err != nil {
			end.Status = mcp.TaskFailed
		}
		fn(end)
	}
	if err != nil && ctx.Err() != nil {
		cctx, cancel := context.WithTimeout(context.Background(), cancelTimeout)
		defer cancel()
		if cerr := c.CancelTask(cctx, t.ID); cerr != nil {
			c.log.Debug("client: cancelling an abandoned task", "task", t.ID, "err", cerr)
		}
	}
	return res, err
}

// toolResult decodes the result of a completed task.
func toolResult(t *Task) (*mcp.CallToolResult, error) {
	if len(t.Result) == 0 {
		return nil, fmt.Errorf("client: task %s completed without a result", t.ID)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(t.Result, &res); err != nil {
		return nil, fmt.Errorf("client: decoding the result of task %s: %w", t.ID, err)
	}
	return &res, nil
}

// taskCtx prepares ctx for a tasks/* request: on a modern connection it
// declares the tasks extension.
func (c *Client) taskCtx(ctx context.Context) context.Context {
	if c.Era() == EraModern {
		return tasksExt(ctx)
	}
	return ctx
}

// GetTask asks for a task's state (tasks/get). On a modern connection the
// Task also carries, by status, the input requests, the result or the
// error.
func (c *Client) GetTask(ctx context.Context, id string) (*Task, error) {
	p := &mcp.TaskIDParams{TaskID: id}
	var raw jsontext.Value
	if err := c.call(c.taskCtx(ctx), mcp.MethodTasksGet, p, &p.Meta, &raw); err != nil {
		return nil, err
	}
	return decodeTask(raw)
}

// CancelTask asks the server to cancel a task (tasks/cancel). A 2026
// server only acknowledges the request (cancellation is cooperative): the
// task's state tells when it is over (GetTask). A 2025 server refuses to
// cancel a task that is already over (-32602).
func (c *Client) CancelTask(ctx context.Context, id string) error {
	p := &mcp.TaskIDParams{TaskID: id}
	return c.call(c.taskCtx(ctx), mcp.MethodTasksCancel, p, &p.Meta, nil)
}

// updateTaskParams are the params of tasks/update.
type updateTaskParams struct {
	Meta           mcp.Meta           `json:"_meta,omitzero"`
	TaskID         string             `json:"taskId"`
	InputResponses mcp.InputResponses `json:"inputResponses"`
}

// UpdateTask answers some or all of an input_required task's input
// requests (tasks/update, 2026-07-28), by key; the task goes on once all
// are answered. TaskResult does this itself with the handlers of Options;
// UpdateTask is for Options.ManualInput (see InputRequiredError.TaskID).
// On a legacy connection it returns ErrLegacy: a 2025 server asks its
// questions with ordinary requests while TaskResult waits.
func (c *Client) UpdateTask(ctx context.Context, id string, responses mcp.InputResponses) error {
	if c.Era() != EraModern {
		return fmt.Errorf("%w: tasks/update", ErrLegacy)
	}
	if responses == nil {
		responses = mcp.InputResponses{}
	}
	p := &updateTaskParams{TaskID: id, InputResponses: responses}
	return c.call(c.taskCtx(ctx), mcp.MethodTasksUpdate, p, &p.Meta, nil)
}

// TaskList is one page of tasks/list.
type TaskList struct {
	Tasks []Task
	// NextCursor is nil on the last page.
	NextCursor *string
}

// ListTasks returns one page of the tasks the server keeps for this
// client (tasks/list, 2025-11-25); p may be nil for the first page. The
// 2026 tasks extension has no tasks/list: on a modern connection it
// returns ErrModern.
func (c *Client) ListTasks(ctx context.Context, p *mcp.PaginatedParams) (*TaskList, error) {
	if c.Era() == EraModern {
		return nil, fmt.Errorf("%w: tasks/list", ErrModern)
	}
	p = orNew(p)
	var w struct {
		Tasks      []jsontext.Value `json:"tasks"`
		NextCursor *string          `json:"nextCursor"`
	}
	if err := c.call(ctx, mcp.MethodTasksList, p, &p.Meta, &w); err != nil {
		return nil, err
	}
	out := &TaskList{Tasks: make([]Task, 0, len(w.Tasks)), NextCursor: w.NextCursor}
	for _, raw := range w.Tasks {
		t, err := decodeTask(raw)
		if err != nil {
			return nil, fmt.Errorf("client: tasks/list: %w", err)
		}
		out.Tasks = append(out.Tasks, *t)
	}
	return out, nil
}

// Tasks iterates over every task of ListTasks, fetching pages as it goes.
func (c *Client) Tasks(ctx context.Context) iter.Seq2[Task, error] {
	return paginate(func(cursor *string) ([]Task, *string, error) {
		res, err := c.ListTasks(ctx, &mcp.PaginatedParams{Cursor: cursor})
		if err != nil {
			return nil, nil, err
		}
		return res.Tasks, res.NextCursor, nil
	})
}

// TaskResult waits for a tool task's outcome and returns what the call
// would have returned: the tool's result (a tool-level failure is a
// result with IsError set), or the call's JSON-RPC error.
//
// Legacy (2025-11-25): it sends tasks/result, which the server answers
// once the task is over (Options.CallTimeout does not apply). A task that
// needs input asks for it meanwhile with elicitation or sampling
// requests, answered by the handlers of Options.
//
// Modern (2026-07-28): it polls tasks/get until the task is over, every
// pollIntervalMs the server suggests (else Options.TaskPollInterval). A
// failed task returns its *jsonrpc.Error (ErrTaskFailed when it has none),
// a cancelled one ErrTaskCanceled. An input_required task's input
// requests are answered with the handlers of Options, as the multi
// round-trip driver answers a call's (see Options.ManualInput), and the
// answers sent with tasks/update; then it polls again at once. Each input
// request is answered once. Without the driver (Options.ManualInput, or no
// handler), or with an input request no handler can answer, it returns an
// *InputRequiredError whose TaskID names the task: answer with
// UpdateTask, then call TaskResult again.
//
// In both eras a transient failure of tasks/result or tasks/get (a
// broken connection, an HTTP 5xx, 408, 425 or 429: an instance restarting
// behind a load balancer; a stream the transport lost; the server's "try
// again later") is not the task's outcome: the request is sent again
// after Options.TaskRetryBackoff, doubling up to
// Options.TaskRetryMaxBackoff, until ctx ends; the error is then returned
// (wrapping ctx's error and the last failure). Only the server's answer
// fails a task: a JSON-RPC error response to tasks/result, or a task
// whose status is failed.
//
// The task goes on when ctx ends; cancel it with CancelTask.
func (c *Client) TaskResult(ctx context.Context, id string) (*mcp.CallToolResult, error) {
	retry := c.newTaskRetry(id)
	if c.Era() != EraModern {
		for {
			p := &mcp.TaskIDParams{TaskID: id}
			var res mcp.CallToolResult
			err := c.call(ctx, mcp.MethodTasksResult, p, &p.Meta, &res)
			if err == nil {
				return &res, nil
			}
			if again, err := retry.again(ctx, mcp.MethodTasksResult, err); !again {
				return nil, err
			}
		}
	}
	answered := make(map[string]bool)
	fn := taskStatusFunc(ctx)
	var last, lastMsg = mcp.TaskStatus(""), ""
	for {
		t, err := c.GetTask(ctx, id)
		if err != nil {
			if again, err := retry.again(ctx, mcp.MethodTasksGet, err); !again {
				return nil, err
			}
			continue
		}
		retry.reset()
		if fn != nil && (t.Status != last || t.StatusMessage != lastMsg) {
			fn(t)
		}
		last, lastMsg = t.Status, t.StatusMessage
		switch t.Status {
		case mcp.TaskCompleted:
			return toolResult(t)
		case mcp.TaskFailed:
			if t.Error != nil {
				return nil, t.Error
			}
			return nil, fmt.Errorf("%w: task %s: %s", ErrTaskFailed, id, t.StatusMessage)
		case mcp.TaskCancelled:
			return nil, fmt.Errorf("%w: task %s", ErrTaskCanceled, id)
		case mcp.TaskInputRequired:
			if ir := pendingInput(t, answered); ir != nil {
				if !c.driving() {
					return nil, ir
				}
				responses, err := c.fulfil(ctx, ir, 0)
				if err != nil {
					if nh, ok := err.(*InputRequiredError); ok {
						nh.TaskID = id
					}
					return nil, err
				}
				if err := c.UpdateTask(ctx, id, responses); err != nil {
					return nil, err
				}
				for _, key := range ir.order {
					answered[key] = true
				}
				continue
			}
		}
		if err := sleep(ctx, c.pollInterval(t)); err != nil {
			return nil, err
		}
	}
}

// pendingInput returns the input requests of t not answered yet, as the
// *InputRequiredError the driver answers; nil when there are none.
func pendingInput(t *Task, answered map[string]bool) *InputRequiredError {
	order := t.order
	if len(order) != len(t.InputRequests) { // cannot happen: the decoder rejects duplicate names
		order = order[:0:0]
		for key := range t.InputRequests {
			order = append(order, key)
		}
	}
	ir := &InputRequiredError{
		Method: mcp.MethodTasksGet,
		Result: &mcp.InputRequiredResult{ResultType: mcp.ResultInputRequired, InputRequests: mcp.InputRequests{}},
		Raw:    t.raw,
		TaskID: t.ID,
	}
	for _, key := range order {
		if !answered[key] {
			ir.Result.InputRequests[key] = t.InputRequests[key]
			ir.order = append(ir.order, key)
		}
	}
	if len(ir.order) == 0 {
		return nil
	}
	return ir
}

// pollInterval is how long TaskResult waits before it asks for t again.
func (c *Client) pollInterval(t *Task) time.Duration {
	if t.PollInterval != nil && *t.PollInterval > 0 {
		return time.Duration(*t.PollInterval) * time.Millisecond
	}
	if c.opts.TaskPollInterval > 0 {
		return c.opts.TaskPollInterval
	}
	return DefaultTaskPollInterval
}
