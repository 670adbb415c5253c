package streamhttp

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json"
)

// castMessages are peers' messages for the broadcast parsing tests: JSON
// with escapes, text that needs escaping, and the edge cases of a string.
var castMessages = []string{
	`{"op":"status","task":"t1","from":"i1","record":{"id":"t1","status":"completed","result":{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}]}},"note":true}`,
	`"`, `\`, `\\"`, "é\u2028\x7f\x01\n\t<>&", `}`, `"}`,
}

// TestParsePeerCast: a peers' broadcast as encode frames it is parsed
// without json.Unmarshal to the sender and message that json.Unmarshal
// reads; any other frame is left to it.
func TestParsePeerCast(t *testing.T) {
	c := &cluster{id: "inst-1"}
	for _, msg := range castMessages {
		raw, err := c.encode(&clusterMsg{Kind: kindPeerCast, Data: msg})
		if err != nil {
			t.Fatal(err)
		}
		from, data, ok := parsePeerCast(raw)
		if !ok || string(from) != "inst-1" || string(data) != msg {
			t.Fatalf("parsePeerCast(%s) = %q, %q, %v; want inst-1, %q", raw, from, data, ok, msg)
		}
	}
	for _, raw := range []string{
		`{"k":"pcall","from":"i","data":"x"}`,                 // another kind
		`{"k":"pcast","from":"i","tag":"t","data":"x"}`,       // another member
		`{"k":"pcast","from":"i","data":"x"} `,                // trailing space
		`{"k":"pcast","from":"i","data":"x\"}`,                // the last quote escaped
		`{"k":"pcast","from":"i","data":"x"}}`,                // trailing bytes
		`{"k":"pcast","from":"i\u0041","data":"x"}`,           // an escaped sender
		"{\"k\":\"pcast\",\"from\":\"i\",\"data\":\"\xff\"}",  // invalid UTF-8
		"{\"k\":\"pcast\",\"from\":\"i\x01\",\"data\":\"x\"}", // a raw control byte
		`{"k":"pcast","from":"i","data":1}`,                   // not a string
		`{"k":"pcast","from":"i"}`,                            // no message
	} {
		if from, data, ok := parsePeerCast([]byte(raw)); ok {
			t.Errorf("parsePeerCast(%s) = %q, %q, ok; want it left to json.Unmarshal", raw, from, data)
		}
	}
}

// FuzzParsePeerCast: whatever parsePeerCast accepts, json.Unmarshal reads
// as a peers' broadcast with the same sender and message, and nothing
// else.
func FuzzParsePeerCast(f *testing.F) {
	c := &cluster{id: "inst-1"}
	for _, msg := range castMessages {
		raw, _ := c.encode(&clusterMsg{Kind: kindPeerCast, Data: msg})
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		from, data, ok := parsePeerCast(raw)
		if !ok {
			return
		}
		var m clusterMsg
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("parsePeerCast accepted %q, which json.Unmarshal refuses: %v", raw, err)
		}
		want := clusterMsg{Kind: kindPeerCast, From: string(from), Data: string(data)}
		if m.Kind != want.Kind || m.From != want.From || m.Data != want.Data || m.Msg != nil || m.State != nil ||
			m.Session != "" || m.Method != "" || m.URI != "" || m.Tag != "" || m.Stream != "" || m.After != 0 ||
			m.Seq != 0 || m.Status != 0 || m.ContentType != "" {
			t.Fatalf("parsePeerCast(%q) = %q, %q; json.Unmarshal reads %+v", raw, from, data, m)
		}
		if !bytes.Equal(data, []byte(m.Data)) {
			t.Fatal("data differs")
		}
	})
}

// TestAppendPeerCast: a peers' broadcast is framed byte for byte as
// encode frames it, from any sender, or left to encode.
func TestAppendPeerCast(t *testing.T) {
	for _, from := range []string{"inst-1", "in\"st\u00e9", "", "bad\xff"} {
		c := &cluster{id: from}
		for _, msg := range append(castMessages, "", "bad\xff") {
			want, wantErr := c.encode(&clusterMsg{Kind: kindPeerCast, Data: msg})
			got, ok := appendPeerCast(nil, from, []byte(msg))
			if ok != (wantErr == nil && msg != "") || (ok && !bytes.Equal(got, want)) {
				t.Fatalf("appendPeerCast(%q, %q) = %s, %v; encode: %s, %v", from, msg, got, ok, want, wantErr)
			}
			if f, err := (peers{c}).Frame([]byte(msg)); !bytes.Equal(f, want) || (err == nil) != (wantErr == nil) {
				t.Fatalf("Frame(%q) = %s, %v; encode: %s, %v", msg, f, err, want, wantErr)
			}
		}
	}
}

// FuzzAppendPeerCast: for any sender and message, appendPeerCast writes
// what encode writes, or leaves it to encode.
func FuzzAppendPeerCast(f *testing.F) {
	for _, msg := range castMessages {
		f.Add("inst-1", msg)
	}
	f.Fuzz(func(t *testing.T, from, msg string) {
		want, wantErr := (&cluster{id: from}).encode(&clusterMsg{Kind: kindPeerCast, Data: msg})
		if got, ok := appendPeerCast(nil, from, []byte(msg)); ok && (wantErr != nil || !bytes.Equal(got, want)) {
			t.Fatalf("appendPeerCast(%q, %q) = %s; encode: %s, %v", from, msg, got, want, wantErr)
		}
	})
}
