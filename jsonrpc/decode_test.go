package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/mcp"
)

// noID marks a case whose error must come without a message (the id could
// not be read).
var noID = mcp.ID{}

type shape int

const (
	shapeRequest shape = iota + 1
	shapeNotification
	shapeResult
	shapeError
)

func TestDecodeValid(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		shape  shape
		id     mcp.ID
		method string
		params string // raw, "" for absent
		result string // raw, "" for absent
		err    *Error
	}{
		{
			name:   "request with object params",
			in:     `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c1"}}`,
			shape:  shapeRequest,
			id:     mcp.IntID(1),
			method: "tools/list",
			params: `{"cursor":"c1"}`,
		},
		{
			name:   "request with array params",
			in:     `{"jsonrpc":"2.0","id":"a","method":"sum","params":[1,2,3]}`,
			shape:  shapeRequest,
			id:     mcp.StringID("a"),
			method: "sum",
			params: `[1,2,3]`,
		},
		{
			name:   "request without params",
			in:     `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
			shape:  shapeRequest,
			id:     mcp.IntID(2),
			method: "ping",
		},
		{
			name:   "members in any order, whitespace kept verbatim in params",
			in:     " \t\r\n{ \"params\" : [ 1 , {\"a\" : 2} ] , \"method\" : \"m\" , \"id\" : 3 , \"jsonrpc\" : \"2.0\" }\n ",
			shape:  shapeRequest,
			id:     mcp.IntID(3),
			method: "m",
			params: `[ 1 , {"a" : 2} ]`,
		},
		{
			name:   "unknown members are ignored",
			in:     `{"jsonrpc":"2.0","id":4,"method":"m","extra":{"x":[1]}}`,
			shape:  shapeRequest,
			id:     mcp.IntID(4),
			method: "m",
		},
		{
			name:   "method with escapes",
			in:     `{"jsonrpc":"2.0","id":5,"method":"a\/b\u00e9\n"}`,
			shape:  shapeRequest,
			id:     mcp.IntID(5),
			method: "a/bé\n",
		},
		{
			name:   "notification",
			in:     `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			shape:  shapeNotification,
			method: "notifications/initialized",
		},
		{
			name:   "notification with params",
			in:     `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":0.5}}`,
			shape:  shapeNotification,
			method: "notifications/progress",
			params: `{"progressToken":"t","progress":0.5}`,
		},
		{
			name:   "member name mcp.ID is not id (case-sensitive): a notification",
			in:     `{"jsonrpc":"2.0","ID":1,"method":"m"}`,
			shape:  shapeNotification,
			method: "m",
		},
		{
			name:   "result response",
			in:     `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
			shape:  shapeResult,
			id:     mcp.IntID(1),
			result: `{"tools":[]}`,
		},
		{
			name:   "null result",
			in:     `{"jsonrpc":"2.0","id":"r","result":null}`,
			shape:  shapeResult,
			id:     mcp.StringID("r"),
			result: `null`,
		},
		{
			name:   "scalar result",
			in:     `{"jsonrpc":"2.0","id":6,"result":"ok"}`,
			shape:  shapeResult,
			id:     mcp.IntID(6),
			result: `"ok"`,
		},
		{
			name:  "error response",
			in:    `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found","data":{"method":"x"}}}`,
			shape: shapeError,
			id:    mcp.IntID(7),
			err:   &Error{Code: -32601, Message: "Method not found", Data: jsontext.Value(`{"method":"x"}`)},
		},
		{
			name:  "error response with null id",
			in:    `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
			shape: shapeError,
			err:   &Error{Code: -32700, Message: "Parse error"},
		},
		{
			name:  "error response with empty message, zero code, null data",
			in:    `{"jsonrpc":"2.0","id":8,"error":{"code":0,"message":"","data":null}}`,
			shape: shapeError,
			id:    mcp.IntID(8),
			err:   &Error{Code: 0, Message: "", Data: jsontext.Value(`null`)},
		},
		{
			// MCP leaves the id out when the request's id was unreadable.
			name:  "error response without id",
			in:    `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}`,
			shape: shapeError,
			err:   &Error{Code: -32600, Message: "Invalid Request"},
		},
		{
			name:  "error response with custom code",
			in:    `{"jsonrpc":"2.0","id":"e","error":{"code":-1,"message":"custom"}}`,
			shape: shapeError,
			id:    mcp.StringID("e"),
			err:   &Error{Code: -1, Message: "custom"},
		},
		// ids
		{name: "id 0", in: `{"jsonrpc":"2.0","id":0,"method":"m"}`, shape: shapeRequest, id: mcp.IntID(0), method: "m"},
		{name: `id ""`, in: `{"jsonrpc":"2.0","id":"","method":"m"}`, shape: shapeRequest, id: mcp.StringID(""), method: "m"},
		{name: `id "0"`, in: `{"jsonrpc":"2.0","id":"0","method":"m"}`, shape: shapeRequest, id: mcp.StringID("0"), method: "m"},
		{name: "negative id", in: `{"jsonrpc":"2.0","id":-42,"method":"m"}`, shape: shapeRequest, id: mcp.IntID(-42), method: "m"},
		{name: "max int64 id", in: `{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}`, shape: shapeRequest, id: mcp.IntID(9223372036854775807), method: "m"},
		{name: "min int64 id", in: `{"jsonrpc":"2.0","id":-9223372036854775808,"method":"m"}`, shape: shapeRequest, id: mcp.IntID(-9223372036854775808), method: "m"},
		{name: "big id beyond 2^53", in: `{"jsonrpc":"2.0","id":9007199254740993,"result":1}`, shape: shapeResult, id: mcp.IntID(9007199254740993), result: `1`},
		{name: "string id with escapes", in: `{"jsonrpc":"2.0","id":"a\"b\\c\u00e9\ud83d\ude00","method":"m"}`, shape: shapeRequest, id: mcp.StringID("a\"b\\cé😀"), method: "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, e := decode([]byte(tt.in), Limits{})
			if e != nil {
				t.Fatalf("decode(%s) = error %v, want success", tt.in, e)
			}
			if m == nil {
				t.Fatal("Decode returned nil message and nil error")
			}
			if m.ID != tt.id {
				t.Errorf("ID = %s (%#v), want %s (%#v)", m.ID, m.ID, tt.id, tt.id)
			}
			if m.Method != tt.method {
				t.Errorf("Method = %q, want %q", m.Method, tt.method)
			}
			if got := string(m.Params); got != tt.params {
				t.Errorf("Params = %q, want %q", got, tt.params)
			}
			if got := string(m.Result); got != tt.result {
				t.Errorf("Result = %q, want %q", got, tt.result)
			}
			switch {
			case tt.err == nil && m.Error != nil:
				t.Errorf("Error = %v, want none", m.Error)
			case tt.err != nil && m.Error == nil:
				t.Errorf("Error = nil, want %v", tt.err)
			case tt.err != nil:
				if m.Error.Code != tt.err.Code || m.Error.Message != tt.err.Message || !bytes.Equal(m.Error.Data, tt.err.Data) {
					t.Errorf("Error = %#v, want %#v", m.Error, tt.err)
				}
			}
			gotShape := map[bool]string{true: "yes", false: "no"}
			req, note, resp := m.IsRequest(), m.IsNotification(), m.IsResponse()
			want := [3]bool{tt.shape == shapeRequest, tt.shape == shapeNotification, tt.shape == shapeResult || tt.shape == shapeError}
			if [3]bool{req, note, resp} != want {
				t.Errorf("IsRequest/IsNotification/IsResponse = %s/%s/%s, want %v", gotShape[req], gotShape[note], gotShape[resp], want)
			}
		})
	}
}

func TestDecodeInvalid(t *testing.T) {
	deep := func(levels int) string {
		// The message object is level 1; params adds levels-1 more.
		inner := strings.Repeat("[", levels-1) + strings.Repeat("]", levels-1)
		return `{"jsonrpc":"2.0","id":1,"method":"m","params":` + inner + `}`
	}
	tests := []struct {
		name string
		in   string
		lim  Limits
		code int64
		id   mcp.ID // the id the error must carry (noID: no message returned)
	}{
		// ids of the wrong type
		{name: "fractional id", in: `{"jsonrpc":"2.0","id":1.5,"method":"m"}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "exponent id", in: `{"jsonrpc":"2.0","id":1e3,"method":"m"}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "1.0 id", in: `{"jsonrpc":"2.0","id":1.0,"method":"m"}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "bool id", in: `{"jsonrpc":"2.0","id":true,"method":"m"}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "object id", in: `{"jsonrpc":"2.0","id":{},"method":"m"}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "array id", in: `{"jsonrpc":"2.0","id":[1],"method":"m"}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "id beyond int64", in: `{"jsonrpc":"2.0","id":9223372036854775808,"method":"m"}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "bad id on a response", in: `{"jsonrpc":"2.0","id":1.5,"result":1}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "bad id on an error response", in: `{"jsonrpc":"2.0","id":false,"error":{"code":1,"message":"m"}}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "null id on a request", in: `{"jsonrpc":"2.0","id":null,"method":"m"}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "null id on a result", in: `{"jsonrpc":"2.0","id":null,"result":1}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "no id on a result", in: `{"jsonrpc":"2.0","result":1}`, code: mcp.CodeInvalidRequest, id: noID},

		// not JSON
		{name: "empty", in: ``, code: mcp.CodeParseError, id: noID},
		{name: "whitespace only", in: " \n\t", code: mcp.CodeParseError, id: noID},
		{name: "truncated", in: `{"jsonrpc":"2.0","id":1,"method":"m"`, code: mcp.CodeParseError, id: noID},
		{name: "single quotes", in: `{'jsonrpc':'2.0'}`, code: mcp.CodeParseError, id: noID},
		{name: "trailing comma", in: `{"jsonrpc":"2.0","id":1,"method":"m",}`, code: mcp.CodeParseError, id: noID},
		{name: "trailing garbage", in: `{"jsonrpc":"2.0","id":1,"method":"m"} x`, code: mcp.CodeParseError, id: noID},
		{name: "two objects", in: `{"jsonrpc":"2.0","method":"a"}{"jsonrpc":"2.0","method":"b"}`, code: mcp.CodeParseError, id: noID},
		{name: "raw control char in string", in: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\x01\"}", code: mcp.CodeParseError, id: noID},
		{name: "invalid UTF-8 in method", in: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", code: mcp.CodeParseError, id: noID},
		{name: "invalid UTF-8 in params", in: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":\"\xc3\x28\"}}", code: mcp.CodeParseError, id: noID},
		{name: "invalid UTF-8 outside strings", in: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\xff", code: mcp.CodeParseError, id: noID},
		{name: "lone surrogate escape in id", in: `{"jsonrpc":"2.0","id":"\ud800","method":"m"}`, code: mcp.CodeParseError, id: noID},

		// duplicate member names
		{name: "duplicate id", in: `{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`, code: mcp.CodeParseError, id: noID},
		{name: "duplicate method", in: `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, code: mcp.CodeParseError, id: noID},
		{name: "duplicate jsonrpc", in: `{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"a"}`, code: mcp.CodeParseError, id: noID},
		{name: "duplicate via escape", in: `{"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"m"}`, code: mcp.CodeParseError, id: noID},
		{name: "duplicate inside params", in: `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"a":2}}`, code: mcp.CodeParseError, id: noID},

		// case-sensitive member names
		{name: "Method is not method", in: `{"jsonrpc":"2.0","id":1,"Method":"m"}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "JSONRPC is not jsonrpc", in: `{"JSONRPC":"2.0","id":1,"method":"m"}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "Result is not result", in: `{"jsonrpc":"2.0","id":1,"Result":1}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},

		// wrong member types and values
		{name: "method number", in: `{"jsonrpc":"2.0","id":1,"method":1}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "method null", in: `{"jsonrpc":"2.0","id":1,"method":null}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "method empty", in: `{"jsonrpc":"2.0","id":1,"method":""}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "params string", in: `{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "params number", in: `{"jsonrpc":"2.0","id":"s","method":"m","params":1}`, code: mcp.CodeInvalidRequest, id: mcp.StringID("s")},
		{name: "params null", in: `{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "notification params string", in: `{"jsonrpc":"2.0","method":"m","params":"x"}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "jsonrpc 1.0", in: `{"jsonrpc":"1.0","id":1,"method":"m"}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "jsonrpc number", in: `{"jsonrpc":2.0,"id":1,"method":"m"}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "jsonrpc missing", in: `{"id":1,"method":"m"}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "jsonrpc null", in: `{"jsonrpc":null,"id":"x","method":"m"}`, code: mcp.CodeInvalidRequest, id: mcp.StringID("x")},

		// shapes
		{name: "result and error", in: `{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "request with result", in: `{"jsonrpc":"2.0","id":1,"method":"m","result":1}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "request with error", in: `{"jsonrpc":"2.0","id":1,"method":"m","error":{"code":1,"message":"m"}}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "response with params", in: `{"jsonrpc":"2.0","id":1,"result":1,"params":{}}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "nothing but id", in: `{"jsonrpc":"2.0","id":1}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "empty object", in: `{}`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "error is a string", in: `{"jsonrpc":"2.0","id":1,"error":"boom"}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "error is null", in: `{"jsonrpc":"2.0","id":1,"error":null}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "error is an array", in: `{"jsonrpc":"2.0","id":1,"error":[]}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "error code is a string", in: `{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "error code is fractional", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "error without code", in: `{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "error without message", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "error with null code", in: `{"jsonrpc":"2.0","id":1,"error":{"code":null,"message":"m"}}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "error with null message", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":null}}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "empty error object", in: `{"jsonrpc":"2.0","id":1,"error":{}}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},
		{name: "error with duplicate code", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"code":2,"message":"m"}}`, code: mcp.CodeParseError, id: noID},
		{name: "error message is a number", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":2}}`, code: mcp.CodeInvalidRequest, id: mcp.IntID(1)},

		// batches and non-objects
		{name: "batch", in: `[{"jsonrpc":"2.0","id":1,"method":"m"}]`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "empty batch", in: ` []`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "malformed batch", in: `[{"jsonrpc":"2.0"`, code: mcp.CodeParseError, id: noID},
		{name: "top-level string", in: `"x"`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "top-level number", in: `42`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "top-level true", in: `true`, code: mcp.CodeInvalidRequest, id: noID},
		{name: "top-level null", in: `null`, code: mcp.CodeInvalidRequest, id: noID},

		// limits
		{name: "depth 65 over the default 64", in: deep(65), code: mcp.CodeParseError, id: noID},
		{name: "depth 3 over a cap of 2", in: deep(3), lim: Limits{MaxDepth: 2}, code: mcp.CodeParseError, id: noID},
		{name: "over MaxBytes", in: `{"jsonrpc":"2.0","id":1,"method":"m"}`, lim: Limits{MaxBytes: 35}, code: mcp.CodeParseError, id: noID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, e := decodeE(t, []byte(tt.in), tt.lim)
			if e == nil {
				t.Fatalf("decode(%q) = %v, want error %d", tt.in, m, tt.code)
			}
			if e.Code != tt.code {
				t.Errorf("decode(%q) code = %d (%s), want %d", tt.in, e.Code, e.Message, tt.code)
			}
			if e.Message == "" {
				t.Error("error has an empty message")
			}
			if !tt.id.IsValid() {
				if m != nil {
					t.Errorf("decode(%q) returned message %v with the error, want nil (no readable id)", tt.in, m)
				}
				return
			}
			if m == nil {
				t.Fatalf("decode(%q) returned no message, want one carrying id %s", tt.in, tt.id)
			}
			if m.ID != tt.id {
				t.Errorf("error message id = %s, want %s", m.ID, tt.id)
			}
			// The error response built from it echoes the id.
			resp, derr := decode(encodeError(m.ID, e), Limits{})
			if derr != nil {
				t.Fatalf("decoding the error response: %v", derr)
			}
			if resp.ID != tt.id || resp.Error == nil || resp.Error.Code != tt.code {
				t.Errorf("error response = %+v, want id %s code %d", resp, tt.id, tt.code)
			}
		})
	}
}

// TestDecodeLimitBoundaries checks that each limit is inclusive.
func TestDecodeLimitBoundaries(t *testing.T) {
	nested := func(levels int) []byte {
		inner := strings.Repeat(`{"a":`, levels-1) + "1" + strings.Repeat("}", levels-1)
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":` + inner + `}`)
	}
	if _, e := decode(nested(64), Limits{}); e != nil {
		t.Errorf("depth 64 with default limits: %v", e)
	}
	if _, e := decodeE(t, nested(65), Limits{}); e == nil || e.Code != mcp.CodeParseError {
		t.Errorf("depth 65 with default limits: %v, want parse error", e)
	}
	if _, e := decode(nested(5), Limits{MaxDepth: 5}); e != nil {
		t.Errorf("depth 5 with MaxDepth 5: %v", e)
	}
	if _, e := decodeE(t, nested(6), Limits{MaxDepth: 5}); e == nil || e.Code != mcp.CodeParseError {
		t.Errorf("depth 6 with MaxDepth 5: %v, want parse error", e)
	}
	// Brackets inside strings are not nesting.
	strs := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":["` + strings.Repeat(`[{\"`, 100) + `"]}`)
	if _, e := decode(strs, Limits{MaxDepth: 2}); e != nil {
		t.Errorf("brackets in strings counted as nesting: %v", e)
	}

	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
	if _, e := decode(msg, Limits{MaxBytes: len(msg)}); e != nil {
		t.Errorf("message of exactly MaxBytes: %v", e)
	}
	if _, e := decodeE(t, msg, Limits{MaxBytes: len(msg) - 1}); e == nil || e.Code != mcp.CodeParseError {
		t.Errorf("message of MaxBytes+1: %v, want parse error", e)
	}
	big := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"` + strings.Repeat("x", DefaultMaxMessageBytes) + `"}}`)
	if _, e := decodeE(t, big, Limits{}); e == nil || e.Code != mcp.CodeParseError {
		t.Errorf("message over DefaultMaxMessageBytes: %v, want parse error", e)
	}
}

// TestIDDistinct checks that ids keep their JSON type.
func TestIDDistinct(t *testing.T) {
	ids := []mcp.ID{mcp.IntID(0), mcp.StringID("0"), mcp.StringID(""), mcp.IntID(1), mcp.StringID("1"), mcp.IntID(-1), {}}
	seen := map[mcp.ID]int{}
	for i, id := range ids {
		if j, ok := seen[id]; ok {
			t.Errorf("ids %d (%s) and %d (%s) compare equal", i, id, j, ids[j])
		}
		seen[id] = i
	}
	if (mcp.ID{}).IsValid() {
		t.Error("zero mcp.ID is valid")
	}
	if !mcp.IntID(0).IsValid() || !mcp.StringID("").IsValid() {
		t.Error("mcp.IntID(0) or mcp.StringID(\"\") is not valid")
	}
	if mcp.IntID(0).IsString() || !mcp.StringID("0").IsString() {
		t.Error("IsString wrong")
	}
	for _, tc := range []struct {
		id   mcp.ID
		want string
	}{
		{mcp.IntID(0), `0`}, {mcp.StringID("0"), `"0"`}, {mcp.StringID(""), `""`}, {mcp.IntID(-7), `-7`}, {mcp.ID{}, `null`},
	} {
		if got := tc.id.String(); got != tc.want {
			t.Errorf("%#v.String() = %s, want %s", tc.id, got, tc.want)
		}
	}
	// ParseID accepts what Decode accepts, and nothing else.
	for _, in := range []string{`1.5`, `1e3`, `true`, `null`, `{}`, `[]`, `9223372036854775808`} {
		if id, err := mcp.ParseID(jsontext.Value(in)); err == nil {
			t.Errorf("ParseID(%s) = %s, want error", in, id)
		}
	}
	if id, err := mcp.ParseID(jsontext.Value(`"x\u00e9"`)); err != nil || id != mcp.StringID("xé") {
		t.Errorf("ParseID string = %#v, %v", id, err)
	}
}

// TestEchoExact checks that a response echoes the request id: the same
// JSON type and value always, and the same bytes whenever the request
// wrote the id in the canonical form (escaping only '"', '\' and control
// characters).
func TestEchoExact(t *testing.T) {
	canonical := []string{
		`0`, `-1`, `9223372036854775807`, `-9223372036854775808`,
		`""`, `"0"`, `"abc"`, `"a\"b"`, `"back\\slash"`, `"\n\t\r\b\f"`, `"\u0000\u001f"`,
		`"é"`, `"日本語"`, `"😀"`, `"<>&"`, "\"\u2028\u2029\"", `"/"`, "\"\u007f\"",
	}
	for _, raw := range canonical {
		req := []byte(`{"jsonrpc":"2.0","id":` + raw + `,"method":"m"}`)
		m, e := decode(req, Limits{})
		if e != nil {
			t.Errorf("decode(%s): %v", req, e)
			continue
		}
		out, err := encodeResult(m.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"jsonrpc":"2.0","id":` + raw + `,"result":{}}`
		if string(out) != want {
			t.Errorf("echo of id %s:\n got %s\nwant %s", raw, out, want)
		}
		if got := string(encodeError(m.ID, NewError(1, "x"))); !strings.Contains(got, `"id":`+raw+`,`) {
			t.Errorf("error echo of id %s: %s", raw, got)
		}
	}
	// Non-canonical spellings of a string id are echoed as the same string.
	for _, tc := range []struct{ raw, value string }{
		{`"\u0041"`, "A"}, {`"\u00e9"`, "é"}, {`"\ud83d\ude00"`, "😀"}, {`"\/"`, "/"}, {`"\u001F"`, "\x1f"},
	} {
		m, e := decode([]byte(`{"jsonrpc":"2.0","id":`+tc.raw+`,"method":"m"}`), Limits{})
		if e != nil {
			t.Fatalf("Decode id %s: %v", tc.raw, e)
		}
		if m.ID != mcp.StringID(tc.value) {
			t.Errorf("id %s decoded as %#v, want %q", tc.raw, m.ID, tc.value)
		}
		out, err := encodeResult(m.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		back, e := decode(out, Limits{})
		if e != nil || back.ID != m.ID {
			t.Errorf("echo of id %s = %s (%v), does not decode to the same id", tc.raw, out, e)
		}
	}
}

func TestMessageString(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"m"}`, `request m id=1`},
		{`{"jsonrpc":"2.0","method":"n"}`, `notification n`},
		{`{"jsonrpc":"2.0","id":"x","result":1}`, `response id="x"`},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}`, `error response id=null code=-32700`},
	} {
		m, e := decode([]byte(tc.in), Limits{})
		if e != nil {
			t.Fatal(e)
		}
		if got := m.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func ExampleDecode() {
	m, e := decode([]byte(`{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"echo"}}`), Limits{})
	fmt.Println(m, e == nil, string(m.Params))
	_, err := decode([]byte(`{"jsonrpc":"2.0","id":1.5,"method":"x"}`), Limits{})
	var je *Error
	fmt.Println(errors.As(err, &je), je.Code)
	// Output:
	// request tools/call id="7" true {"name":"echo"}
	// true -32600
}

// TestIDInvalidUTF8 checks that an id built from a string that is not
// valid UTF-8 still renders as valid JSON (lossily, with U+FFFD), so that
// no encoder emits a message the peer cannot parse.
func TestIDInvalidUTF8(t *testing.T) {
	id := mcp.StringID("a\xffb")
	text := id.String()
	if !jsontext.Value(text).IsValid() {
		t.Fatalf("mcp.StringID(%q) renders as %s, which is not valid JSON", id.Str(), text)
	}
	if text != "\"a\ufffdb\"" {
		t.Errorf("mcp.StringID(%q) renders as %s, want \"a\ufffdb\"", id.Str(), text)
	}
	for name, encode := range map[string]func() ([]byte, error){
		"request": func() ([]byte, error) { return encodeRequest(id, "m", nil) },
		"result":  func() ([]byte, error) { return encodeResult(id, nil) },
		"error":   func() ([]byte, error) { return encodeError(id, NewError(1, "x")), nil },
	} {
		out, err := encode()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		m, e := decode(out, Limits{})
		if e != nil {
			t.Errorf("%s %q does not decode: %v", name, out, e)
			continue
		}
		if m.ID != mcp.StringID("a\ufffdb") {
			t.Errorf("%s id decodes as %#v", name, m.ID)
		}
	}
}

// TestEncodeErrorWithoutID: an error answering a message whose id could
// not be read is a valid error response with no id.
func TestEncodeErrorWithoutID(t *testing.T) {
	out := encodeError(mcp.ID{}, NewError(mcp.CodeParseError, "Parse error").WithData("detail"))
	m, e := decode(out, Limits{})
	if e != nil {
		t.Fatalf("%s does not decode: %v", out, e)
	}
	if m.ID.IsValid() || !m.IsResponse() || m.Error == nil || m.Error.Code != mcp.CodeParseError || string(m.Error.Data) != `"detail"` {
		t.Errorf("%s decodes as %+v %+v", out, m, m.Error)
	}
}

// decodeE calls Decode and returns its error as the *Error it always is.
func decodeE(t testing.TB, data []byte, lim Limits) (*Message, *Error) {
	t.Helper()
	m, err := decode(data, lim)
	if err == nil {
		return m, nil
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Decode error %T is not an *Error", err)
	}
	return m, e
}

// TestEncodeRawParams: params given as a jsontext.Value or a pointer to
// one are sent byte for byte (escapes and member order kept), an invalid
// one is refused, and an empty one is the empty object.
func TestEncodeRawParams(t *testing.T) {
	raw := jsontext.Value(`{"b":"\u00e9\/","a":[1, 2]}`)
	want := `{"jsonrpc":"2.0","id":1,"method":"m","params":` + string(raw) + `}`
	for _, p := range []any{raw, &raw} {
		out, err := encodeRequest(mcp.IntID(1), "m", p)
		if err != nil || string(out) != want {
			t.Errorf("params %T: %s (%v), want %s", p, out, err, want)
		}
	}
	bad := jsontext.Value(`{"a":`)
	for _, p := range []any{bad, &bad} {
		if _, err := encodeRequest(mcp.IntID(1), "m", p); err == nil {
			t.Errorf("invalid params %T sent", p)
		}
	}
	var empty jsontext.Value
	if out, err := encodeRequest(mcp.IntID(1), "m", &empty); err != nil || !strings.HasSuffix(string(out), `"params":{}}`) {
		t.Errorf("empty params: %s (%v)", out, err)
	}
}

// TestDecodeOwned: Decode copies the bytes it is given, so that changing
// them later leaves the message alone; DecodeOwned, for bytes handed
// over, decodes the same message without the copy.
func TestDecodeOwned(t *testing.T) {
	const msg = `{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":"x"}}`
	data := []byte(msg)
	m, err := decodeMessage(data, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	owned, err := decodeOwnedMessage(bytes.Clone(data), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if owned.ID != m.ID || owned.Method != m.Method || string(owned.Params) != string(m.Params) {
		t.Errorf("owned decode %v, want %v", owned, m)
	}
	copy(data, bytes.Repeat([]byte(" "), len(data)))
	if string(m.Params) != `{"a":"x"}` {
		t.Errorf("Decode's params changed with the caller's bytes: %s", m.Params)
	}
	if _, err := decodeOwnedMessage([]byte(`{"jsonrpc":"2.0","id":1}`), Limits{}); err == nil {
		t.Error("DecodeOwned accepted a message of no shape")
	}
}
