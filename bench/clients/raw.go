package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/bench/workload"
)

// raw is the ceiling: the leanest honest loop an application writes with
// net/http and encoding/json alone. Each call builds its request by
// appending bytes (a fresh id; in the modern era the constant _meta
// envelope and the SEP-2243 headers), POSTs it over the same http.Client
// as the SDKs, reads the answer once (its Content-Length sizes the
// buffer) and decodes it once into a typed struct with encoding/json. It
// checks what the SDKs' callers check: the HTTP status, the answer's id,
// a JSON-RPC error, and the result's content; nothing of the protocol
// beyond that.
type raw struct {
	hc      *http.Client
	url     string
	w       string
	modern  bool
	session []string // the Mcp-Session-Id header's value (legacy)
	id      atomic.Int64
}

type rawImplementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type rawArgs struct {
	Text string `json:"text"`
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

// rawEnvelope is the modern request's _meta, the same on every call (the
// client's version, capabilities and identity), as an application keeps
// it: constant bytes.
const rawEnvelope = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + workload.Modern +
	`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}`

// Header values, shared read-only by every request (net/http does not
// modify a request's headers).
var (
	rawContentType   = []string{"application/json"}
	rawAccept        = []string{"application/json, text/event-stream"}
	rawModernVersion = []string{workload.Modern}
	rawLegacyVersion = []string{workload.Legacy}
)

// rawMaxAnswer bounds an answer's read.
const rawMaxAnswer = 1 << 20

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
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		return nil, fmt.Errorf("clients: raw: initialize: status %d, session %q", resp.StatusCode, session)
	}
	r.session = []string{session}
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
	h := req.Header
	h["Content-Type"] = rawContentType
	h["Accept"] = rawAccept
	if r.modern {
		h["Mcp-Protocol-Version"] = rawModernVersion
		h["Mcp-Method"] = []string{method}
		if name != "" {
			h["Mcp-Name"] = []string{name}
		}
	} else {
		h["Mcp-Protocol-Version"] = rawLegacyVersion
		if r.session != nil {
			h["Mcp-Session-Id"] = r.session
		}
	}
	return r.hc.Do(req)
}

// appendRequest appends a request's JSON text: params holds the members of
// its params after the envelope (each with its leading comma, or none).
func (r *raw) appendRequest(b []byte, id int64, method string, params func([]byte) []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	b = append(b, `,"params":{`...)
	if r.modern {
		b = append(b, rawEnvelope...)
	}
	b = params(b)
	return append(b, "}}"...)
}

// appendString appends s as a JSON string: quotes, backslashes and
// control characters escaped, everything else (UTF-8) as it is.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// rpc sends one request and decodes its result into res. params appends
// the request's own params members (see appendRequest).
func rpc[R any](ctx context.Context, r *raw, method, name string, params func([]byte) []byte, res *R) error {
	id := r.id.Add(1)
	body := r.appendRequest(make([]byte, 0, 384), id, method, params)
	resp, err := r.post(ctx, body, method, name)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("clients: raw: status %d", resp.StatusCode)
	}
	answer, err := readAnswer(resp)
	if err != nil {
		return fmt.Errorf("clients: raw: %w", err)
	}
	out := rawResponse[R]{Result: res}
	if err := json.Unmarshal(answer, &out); err != nil {
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

// readAnswer reads a whole answer, in one buffer when the server said
// its length, within rawMaxAnswer.
func readAnswer(resp *http.Response) ([]byte, error) {
	n := resp.ContentLength
	if n < 0 || n > rawMaxAnswer {
		n = 512
	}
	b := make([]byte, 0, n+1) // +1: the read that meets the end needs no room to grow
	for {
		if len(b) == cap(b) {
			if len(b) > rawMaxAnswer {
				return nil, fmt.Errorf("answer over %d bytes", rawMaxAnswer)
			}
			b = append(b, 0)[:len(b)]
		}
		m, err := resp.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (r *raw) Call(ctx context.Context) error {
	if r.w == "W7c" {
		var names []string
		cursor := ""
		for {
			var res rawListResult
			params := func(b []byte) []byte {
				if cursor == "" {
					return b
				}
				if r.modern {
					b = append(b, ',')
				}
				b = append(b, `"cursor":`...)
				return appendString(b, cursor)
			}
			if err := rpc(ctx, r, "tools/list", "", params, &res); err != nil {
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
	if err := rpc(ctx, r, "tools/call", "echo", r.echoParams, &res); err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("clients: raw: unexpected result %+v", res)
	}
	return checkText("raw", res.StructuredContent.Text)
}

// echoParams appends the echo call's name and arguments.
func (r *raw) echoParams(b []byte) []byte {
	if r.modern {
		b = append(b, ',')
	}
	b = append(b, `"name":"echo","arguments":{"text":`...)
	b = appendString(b, workload.Text)
	return append(b, '}')
}

func (r *raw) Close() error {
	if r.session == nil {
		return nil
	}
	req, err := http.NewRequest(http.MethodDelete, r.url, nil)
	if err != nil {
		return err
	}
	req.Header["Mcp-Session-Id"] = r.session
	req.Header.Set("Mcp-Protocol-Version", workload.Legacy)
	resp, err := r.hc.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
