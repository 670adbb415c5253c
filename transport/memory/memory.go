package memory

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/mcpkit/mcpkit/transport"
)

// pipe is one direction: messages written by one end, read by the other.
type pipe struct {
	ch     chan []byte
	closed chan struct{} // closed when the writing end closes
	once   sync.Once
}

func newPipe() *pipe {
	return &pipe{ch: make(chan []byte), closed: make(chan struct{})}
}

func (p *pipe) close() { p.once.Do(func() { close(p.closed) }) }

// Conn is one end of an in-memory pair.
type Conn struct {
	in, out *pipe
	closed  chan struct{}
	once    sync.Once
}

var _ transport.Conn = (*Conn)(nil)

// NewPair returns two connected Conns: what one writes, the other reads.
// Closing one end makes the other's Read return io.EOF.
func NewPair() (*Conn, *Conn) {
	ab, ba := newPipe(), newPipe()
	a := &Conn{in: ba, out: ab, closed: make(chan struct{})}
	b := &Conn{in: ab, out: ba, closed: make(chan struct{})}
	return a, b
}

// Read returns the next message written by the other end.
func (c *Conn) Read(ctx context.Context) ([]byte, error) {
	select {
	case <-c.closed:
		return nil, transport.ErrClosed
	default:
	}
	select {
	case msg := <-c.in.ch:
		return msg, nil
	case <-c.in.closed:
		return nil, io.EOF
	case <-c.closed:
		return nil, transport.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write hands a copy of m.Data to the other end, waiting until it is
// read. Routes and headers are ignored.
func (c *Conn) Write(ctx context.Context, m transport.Message) error {
	msg := m.Data
	select {
	case <-c.closed:
		return transport.ErrClosed
	default:
	}
	cp := bytes.Clone(msg)
	select {
	case c.out.ch <- cp:
		return nil
	case <-c.out.closed:
		return transport.ErrClosed
	case <-c.in.closed:
		return io.ErrClosedPipe // the other end is gone
	case <-c.closed:
		return transport.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes this end; the other end's Read then returns io.EOF.
func (c *Conn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.out.close()
	})
	return nil
}
