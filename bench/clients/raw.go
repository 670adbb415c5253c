package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/bench/workload"
)

// raw is the ceiling: what an application writes with net/http and
// encoding/json alone. Each call encodes its request (a fresh id; in the
// modern era the _meta envelope and the SEP-2243 headers), POSTs it and
// decodes the answer into a struct; no SDK, no checks of the protocol
// beyond the answer's content.
type raw struct {
	hc      *http.Client
	url     string
	w       string
	modern  bool
	session string
	id      atomic.Int64
}

type rawMeta struct {
	ProtocolVersion    string            `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities struct{}          `json:"io.modelcontextprotocol/clientCapabilities"`
	ClientInfo         rawImplementation `json:"io.modelcontextprotocol/clientInfo"`
}

type rawImplementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type rawParams struct {
	Meta      *rawMeta `json:"_meta,omitempty"`
	Name      string   `json:"name,omitempty"`
	Arguments *rawArgs `json:"arguments,omitempty"`
	Cursor    string   `json:"cursor,omitempty"`
}

type rawArgs struct {
	Text string `json:"text"`
}

type rawRequest struct {
	JSONRPC string     `json:"jsonrpc"`
	ID      int64      `json:"id"`
	Method  string     `json:"method"`
	Params  *rawParams `json:"params,omitempty"`
}

type rawResponse[R any] struct {
	ID     int64 `json:"id"`
	Result *R    `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

type rawCallResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent rawArgs `json:"structuredContent"`
	IsError           bool    `json:"isError"`
}

type rawListResult struct {
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	NextCursor string `json:"nextCursor"`
}

var rawInfo = rawImplementation{Name: "bench", Version: "1.0.0"}

func newRaw(ctx context.Context, w, url string, hc *http.Client) (*raw, error) {
	r := &raw{hc: hc, url: url, w: w, modern: w != "W3c"}
	if r.modern {
		return r, nil
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": workload.Legacy, "capabilities": map[string]any{}, "clientInfo": rawInfo}})
	resp, err := r.post(ctx, body, "initialize", "")
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if r.session = resp.Header.Get("Mcp-Session-Id"); resp.StatusCode != http.StatusOK || r.session == "" {
		return nil, fmt.Errorf("clients: raw: initialize: status %d, session %q", resp.StatusCode, r.session)
	}
	resp, err = r.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "notifications/initialized", "")
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return r, nil
}

// post sends one message with the headers of its era.
func (r *raw) post(ctx context.Context, body []byte, method, name string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r.modern {
		req.Header.Set("Mcp-Protocol-Version", workload.Modern)
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	} else {
		req.Header.Set("Mcp-Protocol-Version", workload.Legacy)
		if r.session != "" {
			req.Header.Set("Mcp-Session-Id", r.session)
		}
	}
	return r.hc.Do(req)
}

// rpc sends one request and decodes its result into res.
func rpc[R any](ctx context.Context, r *raw, method string, p *rawParams, res *R) error {
	id := r.id.Add(1)
	if r.modern {
		p.Meta = &rawMeta{ProtocolVersion: workload.Modern, ClientInfo: rawInfo}
	}
	body, err := json.Marshal(&rawRequest{JSONRPC: "2.0", ID: id, Method: method, Params: p})
	if err != nil {
		return err
	}
	resp, err := r.post(ctx, body, method, p.Name)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("clients: raw: status %d", resp.StatusCode)
	}
	out := rawResponse[R]{Result: res}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return fmt.Errorf("clients: raw: %w", err)
	}
	if out.Error != nil {
		return fmt.Errorf("clients: raw: error %d: %s", out.Error.Code, out.Error.Message)
	}
	if out.ID != id {
		return fmt.Errorf("clients: raw: answer to id %d, want %d", out.ID, id)
	}
	return nil
}

func (r *raw) Call(ctx context.Context) error {
	if r.w == "W7c" {
		var names []string
		cursor := ""
		for {
			var res rawListResult
			if err := rpc(ctx, r, "tools/list", &rawParams{Cursor: cursor}, &res); err != nil {
				return err
			}
			for _, t := range res.Tools {
				names = append(names, t.Name)
			}
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		return checkTools(len(names), func(i int) string { return names[i] })
	}
	var res rawCallResult
	if err := rpc(ctx, r, "tools/call", &rawParams{Name: "echo", Arguments: &rawArgs{Text: workload.Text}}, &res); err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("clients: raw: unexpected result %+v", res)
	}
	return checkText("raw", res.StructuredContent.Text)
}

func (r *raw) Close() error {
	if r.session == "" {
		return nil
	}
	req, err := http.NewRequest(http.MethodDelete, r.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Mcp-Session-Id", r.session)
	req.Header.Set("Mcp-Protocol-Version", workload.Legacy)
	resp, err := r.hc.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
