package mcp

import (
	"errors"
	"reflect"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// slowDecodeContent is DecodeContent without its fast paths (plainText,
// leadingContent): the probe of "type", then the block's own decoder.
func slowDecodeContent(raw jsontext.Value) (Content, error) {
	var probe struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, err
	}
	if probe.Type == nil {
		return nil, errors.New("no type")
	}
	c, err := newContent(*probe.Type)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, err
	}
	return c, nil
}

// TestDecodeContentFastPaths holds DecodeContent's fast paths to the
// answer of the full decode, block by block: the same value, or an error
// for both.
func TestDecodeContentFastPaths(t *testing.T) {
	for _, raw := range []string{
		`{"type":"text","text":"hello"}`,
		`{"type":"text","text":""}`,
		`{"type":"text","text":"héllo ☃"}`,
		`{"type":"text","text":"a\"b"}`,
		`{"type":"text","text":"a\\b"}`,
		`{"type":"text","text":"\u0041"}`,
		"{\"type\":\"text\",\"text\":\"a\x01b\"}",
		"{\"type\":\"text\",\"text\":\"a\xffb\"}",
		`{"type":"text","text":"x","type":"text"}`,
		`{"type":"text","text":"x","type":"image"}`,
		`{"type":"text","text":"x","annotations":{"priority":0.5}}`,
		`{"type":"text","text":"x","_meta":{"k":1}}`,
		`{"type":"text","text":"a"b"}`,
		`{"type":"text","text":"x"}}`,
		`{"type":"text" ,"text":"x"}`,
		`{"type":"image","data":"aGk=","mimeType":"image/png"}`,
		`{"type":"image","data":"aGk=","mimeType":"image/png","type":"text"}`,
		`{"type":"resource_link","uri":"file:///a","name":"a"}`,
		`{"type":"audio","data":"aGk=","mimeType":"audio/wav"}`,
		`{"type":"resource","resource":{"uri":"file:///a","text":"t"}}`,
		`{"type":"nope","text":"x"}`,
		`{"type":"te\u0078t","text":"x"}`,
		`{"text":"x","type":"text"}`,
		`{"type":"text"}`,
		`{"type":"text","text":1}`,
		`{"type":"text","text":"{\"text\":\"hello-bench\"}"}`,
		`{"type":"text","text":"\"\\\/\b\f\n\r\t"}`,
		`{"type":"text","text":"é\n☃\"😀"}`,
		`{"type":"text","text":"a\\"}`,
		`{"type":"text","text":"a\"}`,
		`{"type":"text","text":"\"}`,
		`{"type":"text","text":"a\x"}`,
		`{"type":"text","text":"a\u00e9\n"}`,
		`{"type":"text","text":"a\ud83d\ude00"}`,
		`{"type":"text","text":"a\n\"b"c"}`,
		"{\"type\":\"text\",\"text\":\"a\\n\x01\"}",
		"{\"type\":\"text\",\"text\":\"a\\n\xff\"}",
		`{"type":"text","text":"a\n","annotations":{"priority":0.5}}`,
	} {
		got, gerr := DecodeContent(jsontext.Value(raw))
		want, werr := slowDecodeContent(jsontext.Value(raw))
		if (gerr == nil) != (werr == nil) {
			t.Errorf("%s: error %v, the full decode's %v", raw, gerr, werr)
			continue
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %#v, the full decode's %#v", raw, got, want)
		}
	}
}

// TestPlainTextEscapes: a text block whose text carries JSON (escaped
// quotes), as a tool's result usually does, is read by the fast path,
// without the decoder: its block and its string are the only allocations.
func TestPlainTextEscapes(t *testing.T) {
	raw := jsontext.Value(`{"type":"text","text":"{\"text\":\"hello\\n\"}"}`)
	c, ok := plainText(raw)
	if !ok {
		t.Fatalf("%s: not taken by the fast path", raw)
	}
	if want := "{\"text\":\"hello\\n\"}"; c.Text != want {
		t.Fatalf("text %q, want %q", c.Text, want)
	}
	n := testing.AllocsPerRun(100, func() {
		if _, err := DecodeContent(raw); err != nil {
			t.Fatal(err)
		}
	})
	if n > 2 {
		t.Errorf("DecodeContent: %v allocations, want 2 (the block and its text)", n)
	}
}

// FuzzPlainText holds the text fast path to the full decode for any text
// between the block's fixed opening and end.
func FuzzPlainText(f *testing.F) {
	for _, s := range []string{`hello`, `{\"a\":\"b\\n\"}`, `a\`, `\u0041`, `\/\b\f\n\r\t`, "\xff", "a\x01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		raw := jsontext.Value(`{"type":"text","text":"` + text + `"}`)
		got, ok := plainText(raw)
		if !ok {
			return
		}
		want, err := slowDecodeContent(raw)
		if err != nil {
			t.Fatalf("%s: the fast path read %q where the full decode fails: %v", raw, got.Text, err)
		}
		if !reflect.DeepEqual(Content(got), want) {
			t.Fatalf("%s: %#v, the full decode's %#v", raw, got, want)
		}
	})
}
