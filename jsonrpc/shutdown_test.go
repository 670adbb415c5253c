package jsonrpc

import (
	"context"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/transport"
)

// stuckReader is a transport whose Read Close cannot interrupt, like
// standard input under stdio.New: it returns only when unblock closes.
type stuckReader struct {
	reading, unblock chan struct{}
}

func (s *stuckReader) Read(ctx context.Context) ([]byte, error) {
	close(s.reading)
	<-s.unblock
	return nil, context.Canceled
}

func (s *stuckReader) Write(ctx context.Context, msg transport.Message) error { return nil }
func (s *stuckReader) Close() error                                           { return nil }

// TestConnCloseReaderStuckInRead: Close does not wait forever for a reader
// blocked in a Read that closing the transport does not end; it gives up
// after ShutdownTimeout (what is tested; nothing waits on it as a margin).
func TestConnCloseReaderStuckInRead(t *testing.T) {
	leakCheck(t)
	s := &stuckReader{reading: make(chan struct{}), unblock: make(chan struct{})}
	c := NewConn(s, &ConnOptions{ShutdownTimeout: time.Millisecond})
	c.Start()
	wait(t, s.reading, "the reader to block")
	closeWithin(t, c)
	close(s.unblock) // the process exiting, in real life
	wait(t, c.reader, "the reader to exit")
}
