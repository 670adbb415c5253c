package stdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/transport"
)

// DefaultMaxMessageBytes is the default cap on one line (one message),
// not counting the newline: 4 MiB.
const DefaultMaxMessageBytes = 4 << 20

// Options configures a Conn. The zero value applies the defaults.
type Options struct {
	// MaxMessageBytes caps one incoming line. A longer line is discarded
	// up to its newline and Read reports transport.ErrMessageTooLarge.
	// Default DefaultMaxMessageBytes.
	MaxMessageBytes int
}

// Conn is a transport.Conn over newline-delimited JSON.
type Conn struct {
	r   *bufio.Reader
	rc  io.Closer // closed by Close, if the reader is closable
	w   io.Writer
	wc  io.Closer // closed by Close, if the writer is closable
	max int

	wmu    sync.Mutex // serialises writes
	once   sync.Once
	closed chan struct{}
}

var _ transport.Conn = (*Conn)(nil)

// NewConn returns a Conn that reads messages from r and writes them to w.
// Close closes r and w when they implement io.Closer; closing r is what
// unblocks a pending Read.
func NewConn(r io.Reader, w io.Writer, opts *Options) *Conn {
	if opts == nil {
		opts = &Options{}
	}
	max := opts.MaxMessageBytes
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	c := &Conn{
		r:      bufio.NewReaderSize(r, 64<<10),
		w:      w,
		max:    max,
		closed: make(chan struct{}),
	}
	c.rc, _ = r.(io.Closer)
	c.wc, _ = w.(io.Closer)
	return c
}

// New returns a Conn over the process's standard input and output, for an
// MCP server launched by its client. Close does not close os.Stdin or
// os.Stdout; a Read blocked on standard input ends when the client closes
// it (the spec's first shutdown step) or the process exits.
func New(opts *Options) *Conn {
	return NewConn(struct{ io.Reader }{os.Stdin}, struct{ io.Writer }{os.Stdout}, opts)
}

// Read returns the next non-empty line, without its line ending.
func (c *Conn) Read(ctx context.Context) ([]byte, error) {
	for {
		select {
		case <-c.closed:
			return nil, transport.ErrClosed
		default:
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := c.readLine()
		if err != nil {
			select {
			case <-c.closed:
				return nil, transport.ErrClosed
			default:
			}
			return nil, err
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue // tolerate blank lines between messages
		}
		return line, nil
	}
}

// readLine reads one line, enforcing the cap on the line without its
// ending ("\n" or "\r\n"). An oversized line is drained to its newline
// and reported as ErrMessageTooLarge.
func (c *Conn) readLine() ([]byte, error) {
	var buf []byte
	for {
		frag, err := c.r.ReadSlice('\n')
		if len(buf)+len(frag) > c.max+2 { // +2: room for "\r\n"
			e := &transport.TooLargeError{Limit: c.max}
			head, _ := transport.Edges(append(buf, frag...))
			e.Head = bytes.Clone(head)
			e.Tail = keepTail(nil, frag)
			if derr := c.drain(err, e); derr != nil {
				return nil, derr
			}
			e.Tail = bytes.TrimRight(e.Tail, "\r\n")
			return nil, e
		}
		buf = append(buf, frag...)
		switch {
		case err == nil:
			buf = buf[:len(buf)-1]
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(buf) == 0 {
				return nil, io.EOF
			}
			// a last message without its newline
		default:
			return nil, err
		}
		if n := len(buf); n > c.max && !(n == c.max+1 && buf[n-1] == '\r') {
			line := bytes.TrimRight(buf, "\r")
			head, tail := transport.Edges(line)
			return nil, &transport.TooLargeError{Limit: c.max, Head: bytes.Clone(head), Tail: bytes.Clone(tail)}
		}
		return buf, nil
	}
}

// keepTail appends frag to tail and keeps the last TooLargeEdge bytes.
func keepTail(tail, frag []byte) []byte {
	_, last := transport.Edges(frag)
	tail = append(tail, last...)
	if n := len(tail); n > transport.TooLargeEdge {
		tail = append(tail[:0], tail[n-transport.TooLargeEdge:]...)
	}
	return tail
}

// drain discards input up to and including the next newline, keeping the
// line's last bytes in e.Tail.
func (c *Conn) drain(err error, e *transport.TooLargeError) error {
	for errors.Is(err, bufio.ErrBufferFull) {
		var frag []byte
		frag, err = c.r.ReadSlice('\n')
		e.Tail = keepTail(e.Tail, frag)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// Write writes m.Data and a newline. A message with raw newlines (a
// verbatim JSON value written with indentation) is compacted first, since
// a line is a message. Routes and headers have no place on one stream:
// they are ignored.
func (c *Conn) Write(ctx context.Context, m transport.Message) error {
	msg := m.Data
	select {
	case <-c.closed:
		return transport.ErrClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0 {
		v := jsontext.Value(bytes.Clone(msg))
		if err := v.Compact(); err != nil {
			return fmt.Errorf("stdio: message is not valid JSON: %w", err)
		}
		msg = v
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	out := make([]byte, 0, len(msg)+1)
	out = append(append(out, msg...), '\n')
	if _, err := c.w.Write(out); err != nil {
		select {
		case <-c.closed:
			return transport.ErrClosed
		default:
		}
		return err
	}
	return nil
}

// Close closes the underlying reader and writer when they are closable.
func (c *Conn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		if c.rc != nil {
			err = c.rc.Close()
		}
		if c.wc != nil {
			if werr := c.wc.Close(); err == nil {
				err = werr
			}
		}
	})
	return err
}
