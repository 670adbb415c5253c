package server

import (
	"context"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/taskrun"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// modernEra is the era of 2026-07-28: no session, every request carries
// its revision, capabilities and log level in its _meta envelope
// (SEP-2575), handlers ask for input with input-required results
// (SEP-2322) and tasks are the io.modelcontextprotocol/tasks extension.
// See era for each method's contract.
type modernEra struct{}

// openInput opens a retry's sealed requestState (tampered, expired,
// foreign or for another request → -32602, and the handler never runs)
// and checks the answers against what the state says was asked
// (checkAnswers: a malformed answer, or content that does not match the
// form, is -32602 and the handler never runs). Answers without a state
// are checked for shape and kept until the handler asks (Server.upfront).
func (modernEra) openInput(ctx context.Context, s *Server, req *Request, responses mcp.InputResponses, state string) error {
	call := req.call
	req.retry = state != "" || len(responses) > 0
	req.state, req.inputs = "", nil
	if state == "" {
		// Answers without a state answer nothing the server asked: each
		// must be well formed now, and they wait until the handler asks
		// (Server.upfront), to be checked against its questions.
		if _, err := checkAnswers(responses, nil, nil); err != nil {
			return err
		}
		if len(responses) > 0 {
			call.upfront = responses
		}
		return nil
	}
	st, err := s.sealer.open(state, call.method, call.target, argsDigest(call.args), principalFrom(ctx))
	if err != nil {
		return jsonrpc.NewError(mcp.CodeInvalidParams, "Invalid params: "+err.Error())
	}
	inputs, err := checkAnswers(responses, st.Asked, st.Forms)
	if err != nil {
		return err
	}
	var kept mcp.InputResponses
	for k, v := range st.Kept {
		if _, asked := st.Asked[k]; asked {
			continue // asked again: only this round's answer counts
		}
		if kept == nil {
			kept = make(mcp.InputResponses, len(st.Kept))
		}
		kept[k] = v
	}
	req.state, req.inputs = st.State, inputs
	call.kept = kept
	if st.Progress != nil {
		req.resumeProgress(*st.Progress)
	}
	return nil
}

func (modernEra) needInput(ctx context.Context, s *Server, req *Request, m method, params *wireParams, in *Input) (any, error) {
	if req.call.upfront != nil {
		return s.upfront(ctx, req, m, params, in)
	}
	return s.inputRequired(ctx, req, in)
}

// stamp adds what every modern result carries: resultType, the server's
// identity in _meta, and (for cacheable results) the cache hints the
// handler did not set itself (SEP-2549).
//
// The result of a retried multi round-trip request gets no cache hints:
// it answers one exchange, not the method and its params (SEP-2322).
func (modernEra) stamp(s *Server, result any, retry bool) any {
	// complete marks a final result; cacheable also adds the cache hints
	// the handler did not set (never on a retry).
	complete := func(rt *mcp.ResultType, meta *mcp.Meta) {
		*rt, *meta = mcp.ResultComplete, s.withServerInfo(*meta)
	}
	cacheable := func(rt *mcp.ResultType, meta *mcp.Meta, ttl **int64, scope *mcp.CacheScope) {
		complete(rt, meta)
		if retry {
			return
		}
		if *ttl == nil {
			ms := s.opts.CacheTTL.Milliseconds()
			*ttl = &ms
		}
		if *scope == "" {
			*scope = s.cacheScope()
		}
	}
	switch r := result.(type) {
	case *mcp.DiscoverResult:
		complete(&r.ResultType, &r.Meta)
	case *mcp.ListToolsResult:
		cacheable(&r.ResultType, &r.Meta, &r.TTLMs, &r.CacheScope)
	case *mcp.ListPromptsResult:
		cacheable(&r.ResultType, &r.Meta, &r.TTLMs, &r.CacheScope)
	case *mcp.ListResourcesResult:
		cacheable(&r.ResultType, &r.Meta, &r.TTLMs, &r.CacheScope)
	case *mcp.ListResourceTemplatesResult:
		cacheable(&r.ResultType, &r.Meta, &r.TTLMs, &r.CacheScope)
	case *mcp.ReadResourceResult:
		cacheable(&r.ResultType, &r.Meta, &r.TTLMs, &r.CacheScope)
	case *mcp.CallToolResult:
		complete(&r.ResultType, &r.Meta)
	case *mcp.GetPromptResult:
		complete(&r.ResultType, &r.Meta)
	case *mcp.CompleteResult:
		complete(&r.ResultType, &r.Meta)
	case *mcp.DetailedTask:
		complete(&r.ResultType, &r.Meta)
	case *mcp.EmptyResult:
		complete(&r.ResultType, &r.Meta)
	case *extResult:
		complete(&r.ResultType, &r.Meta)
	case *mcp.InputRequiredResult: // never cacheable (SEP-2322); resultType set by its builder
		r.Meta = s.withServerInfo(r.Meta)
	case *mcp.CreatedTaskResult: // resultType "task" set by its builder
		r.Meta = s.withServerInfo(r.Meta)
	case struct{}:
		return &mcp.EmptyResult{ResultType: mcp.ResultComplete, Meta: s.withServerInfo(nil)}
	}
	return result
}

func (modernEra) canCall() error { return ErrModernRequest }

// logThreshold is the envelope's logLevel; without one the request gets
// no log notifications (2026-07-28 logging).
func (modernEra) logThreshold(r *Request) (mcp.LoggingLevel, bool) {
	return r.logLevel, r.logLevel != ""
}

func (modernEra) missingCapability(missing mcp.ClientCapabilities) *jsonrpc.Error {
	return jsonrpc.NewError(mcp.CodeMissingRequiredClientCapability, "Missing required client capability").
		WithData(mcp.MissingCapabilityData{RequiredCapabilities: missing})
}

func (modernEra) resourceNotFound(uri string) *jsonrpc.Error {
	return resourceNotFound(mcp.CodeInvalidParams, uri)
}

// httpStatus: the three MCP errors are 400, an unknown method 404, and
// errors of the method itself 200.
func (modernEra) httpStatus(e *jsonrpc.Error) int {
	switch e.Code {
	case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion:
		return statusBadRequest
	case mcp.CodeMethodNotFound:
		return statusNotFound
	case mcp.CodeRateLimited:
		return statusTooManyRequests
	}
	return statusOK
}

// tasks: the tasks extension's rules.
func (modernEra) tasks() tasks.Rules { return tasks.Extension{} }

// cancelTask is cooperative: the task settles cancelled when its
// handler returns (at once when no handler runs here), and the answer
// is an empty acknowledgement, also for a task already terminal.
func (modernEra) cancelTask(ctx context.Context, s *Server, rec *store.TaskRecord) (any, error) {
	if rec.Status.Terminal() {
		return &mcp.EmptyResult{}, nil
	}
	s.tasks.CancelModern(ctx, rec)
	return &mcp.EmptyResult{}, nil
}

func (modernEra) gatherTaskInput(ctx context.Context, s *Server, run *taskrun.Run, rec *store.TaskRecord, treq *Request, in *Input) bool {
	return s.awaitTaskInput(ctx, run, rec, treq, in)
}

func (modernEra) announceTask(s *Server, _ *taskrun.Run, rec *store.TaskRecord) {
	s.notifyTaskListeners(rec)
}

// hasTasksExtension reports whether a request declared the 2026 tasks
// extension.
func hasTasksExtension(req *Request) bool {
	_, ok := req.clientCaps().Extensions[mcp.ExtensionTasks]
	return ok
}

// awaitTaskInput puts a task of the 2026 extension in input_required
// until tasks/update has answered every request of in, then back to
// working with the answers on treq. It reports false when the task
// ended meanwhile.
func (s *Server) awaitTaskInput(ctx context.Context, run *taskrun.Run, rec *store.TaskRecord, treq *Request, in *Input) bool {
	answers, ok := s.tasks.AwaitInput(ctx, run, rec, in.asked(), in.requests, in.forms)
	if !ok {
		return false
	}
	// Earlier rounds' answers stay, as in the shim (keptAnswers), apart
	// from this round's.
	kept := keptAnswers(treq, in)
	treq.inputs, treq.state = answers, in.state
	treq.setKept(kept)
	// Usually a no-op: the Manager's Update stored working already. Not
	// when that update came before this round's input_required was
	// stored, or its write failed.
	s.tasks.SetStatus(context.Background(), run, rec, mcp.TaskWorking, nil)
	return true
}
