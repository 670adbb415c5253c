package streamhttp

// Tests of resumptions (GET with Last-Event-ID) that name a stream the
// session never had: a stream id made up, or one of another session.
// They are answered 404 with a JSON-RPC error, not with an empty stream;
// a stream whose POST is over but whose events are stored still replays,
// and a stream of another instance is still relayed.

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit/server/internal/httpenv"

	"github.com/mcpkit/mcpkit/server"

	"github.com/mcpkit/mcpkit/mcp"
)

// expectUnknownStream checks the answer to a resumption of a stream the
// session does not have.
func expectUnknownStream(e *httpEnv, sid, last string) {
	e.T.Helper()
	m := e.ExpectStatus(e.resume(sid, last), http.StatusNotFound)
	if m == nil || m.Error.Code != mcp.CodeInvalidRequest {
		e.T.Errorf("resuming %s: want a -32600 error body, got %+v", last, m)
	}
}

func TestHTTPResumeUnknownStream(t *testing.T) {
	s := echoServer()
	tool := addPollTool(s)
	e := newHTTPEnv(t, s, nil)
	sidA, sidB := e.Initialize("{}"), e.Initialize("{}")

	expectUnknownStream(e, sidA, "madeupstream_0")
	expectUnknownStream(e, sidA, "madeupstream_7")

	// A's POST stream, over once the tool answers.
	id := e.ID()
	pending := e.PostHeaders(sidA, httpenv.ToolCall(id, "poll", "", "tok"))
	tool.do(t, "progress")
	post := e.OpenSSE(e.Headers(pending))
	stream := post.Prime(0)
	expectProgress(t, post, stream, 1, 1)
	tool.finish(t)
	expectResult(t, post, stream, id, 2)
	post.End()

	// B cannot resume A's stream, from any event.
	expectUnknownStream(e, sidB, stream+"_0")
	expectUnknownStream(e, sidB, stream+"_1")
	// A still can: its events are stored after the POST ended (retried
	// while the POST's reader may still be finishing: 409).
	replay := e.OpenSSE(resume(e, sidA, stream+"_0"))
	replay.Plain = true
	expectProgress(t, replay, stream, 1, 1)
	expectResult(t, replay, stream, id, 2)
	replay.End()
	// The refused resumptions ended no session.
	for _, sid := range []string{sidA, sidB} {
		e.ReadJSON(e.Post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, e.ID())))
	}
}

// TestHTTPResumeUnknownStreamCluster: a stream id naming an instance
// that is alive but has no such stream (made up, or another session's)
// is 404 too, once the owner has said so.
func TestHTTPResumeUnknownStreamCluster(t *testing.T) {
	var tool *pollTool
	a, b, brokerA, _ := clusterPair(t, func(s *server.Server) {
		if tool == nil {
			tool = addPollTool(s)
		}
	})
	sid, other := a.Initialize("{}"), a.Initialize("{}")
	expectUnknownStream(b, sid, brokerA.ID()+"-pmadeupstream_0")
	expectUnknownStream(b, sid, brokerA.ID()+"-gmadeupstream_3")

	// A live stream of sid on A: other cannot resume it, on A or on B;
	// sid can, on B, relayed from A.
	id := a.ID()
	var addr string
	pending := a.PostHeaders(sid, httpenv.ToolCall(id, "poll", "", "tok"), httpenv.WithConnAddr(&addr))
	tool.do(t, "progress")
	post := a.OpenSSE(a.Headers(pending))
	stream := post.Prime(0)
	expectProgress(t, post, stream, 1, 1)
	post.Close()
	// A serves a stream to one reader at a time: the resumption below
	// must find the POST's reader gone (409 otherwise).
	httpenv.RecvT(t, a.ServerClosed(addr), "A to see the client leave")
	expectUnknownStream(a, other, stream+"_0")
	expectUnknownStream(b, other, stream+"_0")
	relayed := b.OpenSSE(b.resume(sid, stream+"_0"))
	relayed.Plain = true
	expectProgress(t, relayed, stream, 1, 1)
	tool.finish(t)
	expectResult(t, relayed, stream, id, 2)
	relayed.Close()
}
