package stdio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpkit/mcpkit/transport"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const hangGuard = 10 * time.Second

// readAll reads until an error, returning the lines and that error.
func readAll(t *testing.T, c *Conn) ([]string, error) {
	t.Helper()
	var out []string
	for i := 0; ; i++ {
		if i > 10000 {
			t.Fatal("Read never ends")
		}
		line, err := c.Read(context.Background())
		if err != nil {
			return out, err
		}
		out = append(out, string(line))
	}
}

func TestReadFraming(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"several messages", "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n", []string{`{"a":1}`, `{"b":2}`, `{"c":3}`}},
		{"CRLF", "{\"a\":1}\r\n{\"b\":2}\r\n", []string{`{"a":1}`, `{"b":2}`}},
		{"mixed endings", "{\"a\":1}\r\n{\"b\":2}\n{\"c\":3}\r\n", []string{`{"a":1}`, `{"b":2}`, `{"c":3}`}},
		{"blank lines skipped", "\n\n{\"a\":1}\n\r\n   \n\t\r\n{\"b\":2}\n\n", []string{`{"a":1}`, `{"b":2}`}},
		{"last line without newline", "{\"a\":1}\n{\"b\":2}", []string{`{"a":1}`, `{"b":2}`}},
		{"only line without newline", `{"a":1}`, []string{`{"a":1}`}},
		{"last line CR without LF", "{\"a\":1}\r", []string{`{"a":1}`}},
		{"inner spaces kept", "  {\"a\": 1}  \n", []string{`  {"a": 1}  `}},
		{"empty input", "", nil},
		{"only blank lines", "\n\r\n \n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Whole input, and one byte per Read from the underlying reader.
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				c := NewConn(r, io.Discard, nil)
				got, err := readAll(t, c)
				if err != io.EOF {
					t.Errorf("final error = %v, want io.EOF", err)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) || len(got) != len(tt.want) {
					t.Errorf("lines = %q, want %q", got, tt.want)
				}
				// EOF is sticky.
				if _, err := c.Read(context.Background()); err != io.EOF {
					t.Errorf("Read after EOF = %v, want io.EOF", err)
				}
			}
		})
	}
}

func TestReadReturnsOwnedSlices(t *testing.T) {
	c := NewConn(strings.NewReader("{\"a\":1}\n{\"b\":2}\n"), io.Discard, nil)
	first, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	if string(first) != `{"a":1}` {
		t.Errorf("first message changed to %q by the next Read", first)
	}
}

func TestReadOversized(t *testing.T) {
	const max = 16
	tests := []struct {
		name string
		in   string
		want []string // "TOO LARGE" marks an ErrMessageTooLarge
	}{
		{"exactly the cap", strings.Repeat("x", max) + "\n{}\n", []string{strings.Repeat("x", max), "{}"}},
		{"cap plus one", strings.Repeat("x", max+1) + "\n{}\n", []string{"TOO LARGE", "{}"}},
		{"cap with CRLF", strings.Repeat("x", max) + "\r\n{}\n", []string{strings.Repeat("x", max), "{}"}},
		{"cap plus one with CRLF", strings.Repeat("x", max+1) + "\r\n{}\n", []string{"TOO LARGE", "{}"}},
		{"way over", strings.Repeat("x", 1000) + "\n{\"next\":true}\n", []string{"TOO LARGE", `{"next":true}`}},
		{"two in a row", strings.Repeat("x", 100) + "\n" + strings.Repeat("y", 100) + "\n{}\n", []string{"TOO LARGE", "TOO LARGE", "{}"}},
		{"last line at the cap without newline", "{}\n" + strings.Repeat("x", max), []string{"{}", strings.Repeat("x", max)}},
		{"last line over the cap without newline", "{}\n" + strings.Repeat("x", max+1), []string{"{}", "TOO LARGE"}},
		{"last line way over without newline", strings.Repeat("x", 100), []string{"TOO LARGE"}},
		// Bigger than bufio's 64 KiB buffer: drained in several fragments.
		{"larger than the read buffer", strings.Repeat("z", 200<<10) + "\n{\"after\":1}\n", []string{"TOO LARGE", `{"after":1}`}},
		{"larger than the read buffer at EOF", "{}\n" + strings.Repeat("z", 200<<10), []string{"{}", "TOO LARGE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.HalfReader(strings.NewReader(tt.in))} {
				c := NewConn(r, io.Discard, &Options{MaxMessageBytes: max})
				var got []string
				for {
					line, err := c.Read(context.Background())
					if errors.Is(err, transport.ErrMessageTooLarge) {
						got = append(got, "TOO LARGE")
						continue
					}
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatalf("Read: %v", err)
					}
					if len(line) > max {
						t.Errorf("Read returned %d bytes, over the %d cap", len(line), max)
					}
					got = append(got, string(line))
					if len(got) > 10 {
						t.Fatal("too many lines")
					}
				}
				if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
					t.Errorf("got %.80q, want %.80q", got, tt.want)
				}
			}
		})
	}
}

func TestReadDefaultCap(t *testing.T) {
	in := strings.Repeat("x", DefaultMaxMessageBytes+1) + "\n{}\n"
	c := NewConn(strings.NewReader(in), io.Discard, nil)
	if _, err := c.Read(context.Background()); !errors.Is(err, transport.ErrMessageTooLarge) {
		t.Fatalf("Read = %v, want ErrMessageTooLarge", err)
	}
	if line, err := c.Read(context.Background()); err != nil || string(line) != "{}" {
		t.Fatalf("next Read = %q, %v", line, err)
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	c := NewConn(io.MultiReader(strings.NewReader("{}\n{\"par"), iotest.ErrReader(boom)), io.Discard, nil)
	if line, err := c.Read(context.Background()); err != nil || string(line) != "{}" {
		t.Fatalf("Read = %q, %v", line, err)
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Read = %v, want the reader's error", err)
	}
}

func TestReadWriteContext(t *testing.T) {
	var out bytes.Buffer
	c := NewConn(strings.NewReader("{}\n"), &out, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Read with a cancelled ctx = %v", err)
	}
	if err := c.Write(ctx, transport.Message{Data: []byte("{}")}); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a cancelled ctx = %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("Write with a cancelled ctx wrote %q", out.String())
	}
	// The message is still there for a live ctx.
	if line, err := c.Read(context.Background()); err != nil || string(line) != "{}" {
		t.Errorf("Read = %q, %v", line, err)
	}
}

func TestWrite(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"verbatim", `{"a": 1, "b" : [1,2]}`, `{"a": 1, "b" : [1,2]}`},
		{"indented", "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ]\n}", `{"a":1,"b":[1,2]}`},
		{"CRLF indented", "{\r\n  \"a\": \"x\\ny\"\r\n}", `{"a":"x\ny"}`},
		{"bare CR", "{\"a\":\r1}", `{"a":1}`},
		{"escapes kept", "{\n\"s\": \"\\u00e9\\n\\\"\"}", `{"s":"\u00e9\n\""}`},
		{"trailing newline", "{\"a\":1}\n", `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			c := NewConn(strings.NewReader(""), &out, nil)
			msg := []byte(tt.in)
			orig := bytes.Clone(msg)
			if err := c.Write(context.Background(), transport.Message{Data: msg}); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tt.want+"\n" {
				t.Errorf("wrote %q, want %q", got, tt.want+"\n")
			}
			if !bytes.Equal(msg, orig) {
				t.Errorf("Write modified the caller's message: %q", msg)
			}
		})
	}
	var out bytes.Buffer
	c := NewConn(strings.NewReader(""), &out, nil)
	if err := c.Write(context.Background(), transport.Message{Data: []byte("{\"a\":\n")}); err == nil {
		t.Error("Write of invalid JSON with a newline succeeded")
	}
	if err := c.Write(context.Background(), transport.Message{Data: []byte("{\"a\":\"raw\nnewline\"}")}); err == nil {
		t.Error("Write of a string with a raw newline succeeded")
	}
	if out.Len() != 0 {
		t.Errorf("failed Writes wrote %q", out.String())
	}
}

// chunkyWriter splits every Write into small pieces with a yield between
// them, so that unserialised concurrent writes would interleave.
type chunkyWriter struct{ w io.Writer }

func (c chunkyWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), 7)
		m, err := c.w.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
		runtime.Gosched()
	}
	return n, nil
}

func TestConcurrentWritersDoNotInterleave(t *testing.T) {
	osr, osw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ior, iow := io.Pipe()
	for _, tc := range []struct {
		name string
		r    io.ReadCloser
		w    io.WriteCloser
		wrap func(io.Writer) io.Writer
	}{
		{"os.Pipe", osr, osw, func(w io.Writer) io.Writer { return w }},
		{"io.Pipe in small chunks", ior, iow, func(w io.Writer) io.Writer { return chunkyWriter{w} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.r.Close()
			writer := NewConn(strings.NewReader(""), tc.wrap(tc.w), nil)
			reader := NewConn(tc.r, io.Discard, nil)
			const writers, each = 16, 50
			msg := func(w, i int) string {
				// Varying sizes, some larger than a pipe's atomic write.
				return fmt.Sprintf(`{"w":%d,"i":%d,"pad":"%s"}`, w, i, strings.Repeat(string(rune('a'+w)), (w*each+i)%9000))
			}
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						if err := writer.Write(context.Background(), transport.Message{Data: []byte(msg(w, i))}); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			go func() { wg.Wait(); tc.w.Close() }()
			want := map[string]bool{}
			for w := range writers {
				for i := range each {
					want[msg(w, i)] = true
				}
			}
			got, err := readAll(t, reader)
			if err != io.EOF {
				t.Fatalf("read error %v", err)
			}
			for _, line := range got {
				if !want[line] {
					t.Fatalf("interleaved or corrupt line: %.120q", line)
				}
				delete(want, line)
			}
			if len(want) != 0 {
				t.Errorf("%d messages missing", len(want))
			}
		})
	}
}

func TestCloseUnblocksRead(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c := NewConn(r, io.Discard, nil)
	if _, err := w.Write([]byte("{\"first\":1}\n")); err != nil {
		t.Fatal(err)
	}
	first := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		if _, err := c.Read(context.Background()); err != nil {
			errc <- err
			return
		}
		close(first)
		_, err := c.Read(context.Background()) // blocks: nothing more is written
		errc <- err
	}()
	select {
	case <-first:
	case err := <-errc:
		t.Fatalf("first Read: %v", err)
	case <-time.After(hangGuard):
		t.Fatal("first Read hung")
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, transport.ErrClosed) {
			t.Errorf("blocked Read = %v, want transport.ErrClosed", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("Close did not unblock Read")
	}
}

func TestCloseUnblocksWrite(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := NewConn(strings.NewReader(""), w, nil)
	errc := make(chan error, 1)
	big := []byte(`"` + strings.Repeat("x", 4<<20) + `"`) // far more than a pipe holds
	go func() { errc <- c.Write(context.Background(), transport.Message{Data: big}) }()
	// Wait until the pipe is full and the Write therefore blocked: read a
	// little so we know the write has begun.
	buf := make([]byte, 1)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, transport.ErrClosed) {
			t.Errorf("blocked Write = %v, want transport.ErrClosed", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("Close did not unblock Write")
	}
}

func TestAfterClose(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(r, w, nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read after Close = %v", err)
	}
	if err := c.Write(context.Background(), transport.Message{Data: []byte("{}")}); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write after Close = %v", err)
	}
	// Both ends were closed.
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("reader not closed: %v", err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("writer not closed: %v", err)
	}

	// Unclosable streams: Close still ends the Conn.
	c = NewConn(strings.NewReader("{}\n"), io.Discard, nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read after Close = %v", err)
	}
}

// TestNewDoesNotCloseStdio checks that New wraps the process's standard
// streams so that Close leaves them open.
func TestNewDoesNotCloseStdio(t *testing.T) {
	c := New(nil)
	if c.rc != nil || c.wc != nil {
		t.Fatal("New would close os.Stdin or os.Stdout")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stdout.Stat(); err != nil {
		t.Errorf("os.Stdout: %v", err)
	}
}
