package stdio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpkit/mcpkit/transport"
)

const tooLarge = "\x00TOO LARGE"

// referenceFraming is the specification FuzzFraming checks Read against:
// lines end at '\n'; a line's length excludes its "\n" or "\r\n"; a line
// over the cap is reported as too large; trailing '\r's are trimmed and
// blank lines skipped; a last line without '\n' counts.
func referenceFraming(in []byte, max int) []string {
	var out []string
	parts := bytes.Split(in, []byte("\n"))
	if len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1] // input ended with '\n' (or was empty)
	}
	for _, p := range parts {
		content := bytes.TrimSuffix(p, []byte("\r"))
		if len(content) > max {
			out = append(out, tooLarge)
			continue
		}
		line := bytes.TrimRight(p, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		out = append(out, string(line))
	}
	return out
}

func FuzzFraming(f *testing.F) {
	seeds := []struct {
		in    string
		limit uint8
	}{
		{"{\"a\":1}\n{\"b\":2}\n", 16},
		{"{\"a\":1}\r\n{\"b\":2}\r\n", 7},
		{"\n\n  \r\n{}\n\t\n", 4},
		{"{}\n{\"last\":true}", 16},
		{"0123456789abcdefXYZ\n{}\n", 16},
		{"0123456789abcdef\r\n{}\n", 16},
		{"0123456789abcdefg", 16},
		{"0123456789abcdef\r", 16},
		{"\r\r\r\n\r", 1},
		{"a\rb\n", 1},
		{"\xff\xfe\n\x00\n", 2},
		{"", 1},
		{"\n", 0},
		{strings.Repeat("x", 300) + "\n{}\n", 32},
	}
	for _, s := range seeds {
		f.Add([]byte(s.in), s.limit, false)
		f.Add([]byte(s.in), s.limit, true)
	}
	f.Fuzz(func(t *testing.T, in []byte, limitByte uint8, oneByte bool) {
		limit := int(limitByte) % 65 // caps of 1 to 64 bytes
		if limit == 0 {
			limit = 1
		}
		var r io.Reader = bytes.NewReader(in)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		c := NewConn(r, io.Discard, &Options{MaxMessageBytes: limit})
		want := referenceFraming(in, limit)
		var got []string
		for reads := 0; ; reads++ {
			if reads > len(in)+2 {
				t.Fatalf("more Reads (%d) than the input allows: no termination", reads)
			}
			line, err := c.Read(context.Background())
			if errors.Is(err, transport.ErrMessageTooLarge) {
				got = append(got, tooLarge)
				continue
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if len(line) > limit {
				t.Fatalf("line of %d bytes over the %d cap: %q", len(line), limit, line)
			}
			if bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("line contains a newline: %q", line)
			}
			if len(line) == 0 || len(bytes.TrimSpace(line)) == 0 {
				t.Fatalf("blank line returned: %q", line)
			}
			got = append(got, string(line))
		}
		if len(got) != len(want) {
			t.Fatalf("input %q cap %d:\n got %q\nwant %q", in, limit, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("input %q cap %d: line %d:\n got %q\nwant %q", in, limit, i, got, want)
			}
		}
	})
}
