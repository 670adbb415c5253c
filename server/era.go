package server

import (
	"context"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/taskrun"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
	"github.com/mcpkit/mcpkit/store"
)

// era is what differs between the two protocol eras a request may
// belong to. Every Request has one, fixed when it is built: legacy
// (revisions 2025-11-25 and older, entered through initialize; sessions,
// server→client requests) or modern (2026-07-28: stateless, the
// per-request _meta envelope). Feature code — dispatch, tools, tasks,
// the Request's own methods — asks its request's era instead of
// branching on the revision, so that a further revision is one more
// implementation of this interface, not a search through the package.
//
// The implementations are stateless package-level values (eraLegacy,
// eraModern): choosing an era allocates nothing. Methods that need the
// server or the request take them as arguments.
//
// What each method owns, and the rule it implements:
type era interface {
	// openInput checks a retried multi round-trip request's answers
	// before its handler runs (SEP-2322): modern opens the sealed
	// requestState and checks inputResponses against what it says was
	// asked (-32602 otherwise); legacy ignores what the client sent —
	// only the in-process shim supplies answers there.
	openInput(ctx context.Context, s *Server, req *Request, responses mcp.InputResponses, state string) error
	// needInput answers a handler that asked for input (*Input, after
	// validation). Modern: an input-required result with a sealed
	// requestState (SEP-2322), or a rerun with answers the client sent
	// before it was asked. Legacy: the shim asks the client itself with
	// server→client requests tied to the original one (SEP-2260) and
	// runs the handler again.
	needInput(ctx context.Context, s *Server, req *Request, m method, params *wireParams, in *Input) (any, error)
	// stamp adds what every result of the era carries. Modern:
	// resultType, serverInfo in result _meta (SEP-2575), and the default
	// cache hints ttlMs/cacheScope on cacheable results except a
	// multi round-trip retry's (SEP-2549, SEP-2322). Legacy: nothing.
	stamp(s *Server, result any, retry bool) any

	// canCall says whether a handler may send server→client requests
	// (elicitation, sampling, roots) at all. Legacy: yes, tied to the
	// request in progress on its session (SEP-2260; Request.canCall
	// checks the rest). Modern: never — ErrModernRequest; handlers ask
	// with an input-required result instead.
	canCall() error
	// logThreshold is the lowest level a request's log notifications
	// may have; ok false sends none. Legacy: the session's
	// logging/setLevel, info by default. Modern: the envelope's logLevel,
	// and no level means no log notifications.
	logThreshold(r *Request) (level mcp.LoggingLevel, ok bool)
	// missingCapability is the error of a request whose client did not
	// declare what the handler needs (Request.Require). Modern: -32021
	// with data.requiredCapabilities (SEP-2575). Legacy: -32603 naming
	// it (-32021 does not exist there).
	missingCapability(missing mcp.ClientCapabilities) *jsonrpc.Error
	// resourceNotFound is resources/read's error for a missing resource:
	// -32002 on legacy revisions, -32602 on modern ones (SEP-2164).
	resourceNotFound(uri string) *jsonrpc.Error
	// httpStatus is the HTTP status of a JSON-RPC error answer on
	// Streamable HTTP. Legacy: 200 (the error travels in the body).
	// Modern: 400 for -32020, -32021 and -32022, 404 for an unknown
	// method, 200 for errors of the method itself.
	httpStatus(e *jsonrpc.Error) int

	// tasks returns the era's task rules, package server/internal/tasks:
	// tasks.Core, the 2025-11-25 core tasks (params.task, tasks/get,
	// result, list, cancel) on legacy requests; tasks.Extension, the
	// io.modelcontextprotocol/tasks extension (declared per request;
	// tasks/get, update, cancel) on modern ones. A task is only visible
	// to requests of the era that created it (lookupTask,
	// tasks.Rules.Modern). The three task rules that act on the server
	// are taskActions, below, not part of this interface.
	tasks() tasks.Rules
}

// eraID names the era of a Request in one byte (an interface value
// would take 16, and push Request into a larger size class).
type eraID uint8

const (
	idLegacy eraID = iota
	idModern
)

// eras are the two eras by id. Their types are empty: an era in an
// interface value costs no allocation.
var eras = [...]era{idLegacy: legacyEra{}, idModern: modernEra{}}

var (
	eraLegacy = eras[idLegacy]
	eraModern = eras[idModern]
)

// taskActions are the task rules of an era that act on the server
// rather than answer from data (those are tasks.Rules). The era types
// implement them beside the era interface; task code reaches them
// through Request.taskActions or taskEra, never through era.
type taskActions interface {
	// cancelTask serves tasks/cancel. Core: the task is cancelled at once
	// and returned; a terminal one is -32602. Extension: cooperative, an
	// empty acknowledgement, also for a terminal task.
	cancelTask(ctx context.Context, s *Server, rec *store.TaskRecord) (any, error)
	// gatherTaskInput holds a task in input_required until the handler's
	// questions are answered. Core: the server asks the client itself on
	// a tasks/result request in flight (SEP-2260), as the shim does.
	// Extension: the client answers with tasks/update (SEP-2322).
	gatherTaskInput(ctx context.Context, s *Server, run *taskrun.Run, rec *store.TaskRecord, treq *Request, in *Input) bool
	// announceTask tells whoever listens that a task's status changed:
	// notifications/tasks/status on the creating session (core), or
	// notifications/tasks on the listen streams that name it (extension).
	announceTask(s *Server, run *taskrun.Run, rec *store.TaskRecord)
}

// taskActs are the eras' task actions by era id: the same empty types
// as eras, so choosing them allocates nothing either.
var taskActs = [...]taskActions{idLegacy: legacyEra{}, idModern: modernEra{}}

// taskActions returns the task actions of the request's era.
func (r *Request) taskActions() taskActions { return taskActs[r.eraID] }

// taskEra returns the task actions of a stored task's era
// (store.TaskRecord.Modern).
func taskEra(rec *store.TaskRecord) taskActions {
	if rec.Modern {
		return taskActs[idModern]
	}
	return taskActs[idLegacy]
}

// The HTTP statuses (RFC 9110) the eras give error answers. The protocol
// server does not import net/http; server/streamhttp sends these.
const (
	statusOK         = 200
	statusBadRequest = 400
	statusNotFound   = 404
	// statusTooManyRequests (RFC 6585) answers a modern request refused
	// by a rate limit (mcp.CodeRateLimited; package ratelimit).
	statusTooManyRequests = 429
)
