package servers

import (
	"encoding/json"
	"net/http"
)

// rawRequest is the part of a JSON-RPC tools/call request the raw
// handler reads.
type rawRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string `json:"name"`
		Arguments EchoIn `json:"arguments"`
		Meta      *struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	} `json:"params"`
}

type rawText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type rawResult struct {
	ResultType        string    `json:"resultType,omitempty"`
	Content           []rawText `json:"content"`
	StructuredContent EchoOut   `json:"structuredContent"`
	Meta              *rawMeta  `json:"_meta,omitempty"`
}

type rawMeta struct {
	ServerInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"io.modelcontextprotocol/serverInfo"`
}

type rawResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *rawResult      `json:"result,omitempty"`
	Error   *rawError       `json:"error,omitempty"`
}

type rawError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Raw is the ceiling: a plain net/http handler that decodes the JSON-RPC
// request with encoding/json and encodes the echo tool's result, with no
// SDK, no sessions, no schema and no header checks. It answers only
// tools/call of "echo" and "blob".
func Raw() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req rawRequest
		resp := rawResponse{JSONRPC: "2.0"}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20)).Decode(&req); err != nil {
			resp.ID = json.RawMessage("null")
			resp.Error = &rawError{Code: -32700, Message: "Parse error"}
		} else if resp.ID = req.ID; req.Method != "tools/call" || req.Params.Name != "echo" && req.Params.Name != "blob" {
			resp.Error = &rawError{Code: -32601, Message: "Method not found"}
		} else {
			o := EchoOut(req.Params.Arguments)
			if req.Params.Name == "blob" {
				o = Blob(req.Params.Arguments)
			}
			out, _ := json.Marshal(o)
			res := &rawResult{Content: []rawText{{Type: "text", Text: string(out)}}, StructuredContent: o}
			if req.Params.Meta != nil && req.Params.Meta.ProtocolVersion != "" {
				res.ResultType = "complete"
				res.Meta = &rawMeta{}
				res.Meta.ServerInfo.Name, res.Meta.ServerInfo.Version = "bench-raw", "1.0.0"
			}
			resp.Result = res
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&resp)
	})
}
