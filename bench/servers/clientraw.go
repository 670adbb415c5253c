package servers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// ClientSessionID is the Mcp-Session-Id the client benchmarks' server
// gives every legacy session.
const ClientSessionID = "bench-client-session"

// ClientRequestState is the requestState of ClientServer's "confirm" tool.
const ClientRequestState = "bench-state-1"

// clientReq is what ClientServer reads of a request.
type clientReq struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Name            string `json:"name"`
		Cursor          string `json:"cursor"`
		Arguments       EchoIn `json:"arguments"`
		RequestState    string `json:"requestState"`
		InputResponses  struct {
			OK struct {
				Action string `json:"action"`
			} `json:"ok"`
		} `json:"inputResponses"`
		Meta struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	} `json:"params"`
}

// ClientServer is the one fast server of the client benchmarks (W1c,
// W3c, W7c, W8c): a plain net/http handler, with no SDK, that answers
// what the three clients and the raw loop send, in both eras, with
// answers built by appending bytes. The path selects the endpoint:
//
//   - PathSession: legacy with a session (initialize gives
//     ClientSessionID, which every later request must carry; DELETE ends
//     nothing and answers 200).
//   - anything else: session-less, both eras (server/discover,
//     initialize for clients that probe, tools/call of "echo" and
//     "confirm", tools/list of ListTools tools, ListPageSize a page).
//
// GET answers 405 (no listening stream), notifications 202. "confirm"
// answers input_required with one elicitation "ok" and
// ClientRequestState, then the echo when the retry carries the
// acceptance and the state. Anything else is a JSON-RPC error, which the
// benchmarks' checks turn into a failure.
func ClientServer() http.Handler {
	pages := listPages()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		session := r.URL.Path == PathSession
		switch r.Method {
		case http.MethodPost:
		case http.MethodDelete:
			if session && r.Header.Get("Mcp-Session-Id") == ClientSessionID {
				w.WriteHeader(http.StatusOK)
				return
			}
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req clientReq
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
		if len(req.ID) == 0 { // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		}
		modern := req.Params.Meta.ProtocolVersion != ""
		if session && req.Method != "initialize" && r.Header.Get("Mcp-Session-Id") != ClientSessionID {
			http.Error(w, "no session", http.StatusNotFound)
			return
		}
		b := make([]byte, 0, 512)
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, req.ID...)
		switch {
		case req.Method == "initialize":
			v := req.Params.ProtocolVersion
			if v != "2025-11-25" && v != "2025-06-18" && v != "2025-03-26" {
				v = "2025-11-25"
			}
			if session {
				w.Header().Set("Mcp-Session-Id", ClientSessionID)
			}
			b = append(b, `,"result":{"protocolVersion":"`...)
			b = append(b, v...)
			b = append(b, `","capabilities":{"tools":{}},"serverInfo":{"name":"bench-raw","version":"1.0.0"}}}`...)
		case req.Method == "server/discover" && !session:
			b = append(b, `,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench-raw","version":"1.0.0"}}}}`...)
		case req.Method == "tools/call" && req.Params.Name == "echo":
			b = appendEcho(b, modern, req.Params.Arguments.Text)
		case req.Method == "tools/call" && req.Params.Name == "confirm" && modern && !session:
			if req.Params.RequestState == "" {
				b = append(b, `,"result":{"resultType":"input_required","inputRequests":{"ok":{"method":"elicitation/create","params":{"mode":"form","message":"Echo?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}},"requestState":"`+ClientRequestState+`"}}`...)
			} else if req.Params.RequestState == ClientRequestState && req.Params.InputResponses.OK.Action == "accept" {
				b = appendEcho(b, modern, req.Params.Arguments.Text)
			} else {
				b = append(b, `,"error":{"code":-32602,"message":"bad retry"}}`...)
			}
		case req.Method == "tools/list":
			page, err := pages.page(req.Params.Cursor, modern)
			if err != nil {
				b = append(b, `,"error":{"code":-32602,"message":"bad cursor"}}`...)
				break
			}
			b = append(b, page...)
		default:
			b = append(b, `,"error":{"code":-32601,"message":"Method not found"}}`...)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	})
}

// appendEcho appends the result of the echo tool for text: content and
// structuredContent, and in the modern era resultType and the
// serverInfo in _meta.
func appendEcho(b []byte, modern bool, text string) []byte {
	b = append(b, `,"result":{`...)
	if modern {
		b = append(b, `"resultType":"complete",`...)
	}
	b = append(b, `"content":[{"type":"text","text":"{\"text\":`...)
	q := strconv.Quote(text) // the benchmarks' texts are plain ASCII: Go and JSON quote them alike
	b = append(b, `\"`...)
	b = append(b, q[1:len(q)-1]...)
	b = append(b, `\"}"}],"structuredContent":{"text":`...)
	b = append(b, q...)
	b = append(b, '}')
	if modern { // as an SDK's server stamps every modern result
		b = append(b, `,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench-raw","version":"1.0.0"}}`...)
	}
	return append(b, `}}`...)
}

// clientPages holds the pre-encoded tools/list pages of both eras,
// each starting at the comma after the id.
type clientPages struct{ legacy, modern []string }

func listPages() *clientPages {
	p := &clientPages{}
	for start := 0; start < ListTools; start += ListPageSize {
		var tools strings.Builder
		for i := start; i < start+ListPageSize; i++ {
			if i > start {
				tools.WriteByte(',')
			}
			fmt.Fprintf(&tools, `{"name":%q,"description":"Tool %d.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`, toolName(i), i)
		}
		next := ""
		if start+ListPageSize < ListTools {
			next = fmt.Sprintf(`,"nextCursor":"%d"`, start+ListPageSize)
		}
		p.legacy = append(p.legacy, `,"result":{"tools":[`+tools.String()+`]`+next+`}}`)
		p.modern = append(p.modern, `,"result":{"resultType":"complete","tools":[`+tools.String()+`]`+next+`,"ttlMs":0,"cacheScope":"public"}}`)
	}
	return p
}

func (p *clientPages) page(cursor string, modern bool) (string, error) {
	i := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n <= 0 || n%ListPageSize != 0 || n >= ListTools {
			return "", fmt.Errorf("bad cursor %q", cursor)
		}
		i = n / ListPageSize
	}
	if modern {
		return p.modern[i], nil
	}
	return p.legacy[i], nil
}
