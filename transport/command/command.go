package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcpkit/mcpkit/transport"
	"github.com/mcpkit/mcpkit/transport/stdio"
)

// Default bounds of the shutdown steps.
const (
	// DefaultExitWait is how long Close waits for the server to exit
	// after closing its stdin, before sending SIGTERM.
	DefaultExitWait = 5 * time.Second
	// DefaultTermWait is how long Close waits after SIGTERM before
	// sending SIGKILL.
	DefaultTermWait = 5 * time.Second
	// killWait bounds the wait after SIGKILL.
	killWait = 5 * time.Second
)

// Options configures a Conn. The zero value applies the defaults.
type Options struct {
	// ExitWait bounds the wait for a voluntary exit after stdin closes.
	// Default DefaultExitWait.
	ExitWait time.Duration
	// TermWait bounds the wait after SIGTERM. Default DefaultTermWait.
	TermWait time.Duration
	// MaxMessageBytes caps one incoming message; see stdio.Options.
	MaxMessageBytes int
}

// Conn is a transport.Conn to a child process.
type Conn struct {
	*stdio.Conn
	toChild  *os.File // the child's stdin, closed first on shutdown
	cmd      *exec.Cmd
	opts     Options
	exited   chan struct{} // closed when the child has been reaped
	waitErr  error
	once     sync.Once
	closeErr error
}

var _ transport.Conn = (*Conn)(nil)

// Start launches cmd with its stdin and stdout connected to the returned
// Conn. cmd.Stdin and cmd.Stdout must be nil; cmd.Stderr is left as the
// caller set it (nil discards the server's log output). The child is
// ended by Close, or by ctx ending before Close, following the spec's
// shutdown order.
func Start(ctx context.Context, cmd *exec.Cmd, o *Options) (*Conn, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	if cmd.Stdin != nil || cmd.Stdout != nil {
		return nil, errors.New("command: cmd.Stdin and cmd.Stdout must be nil")
	}
	if opts.ExitWait <= 0 {
		opts.ExitWait = DefaultExitWait
	}
	if opts.TermWait <= 0 {
		opts.TermWait = DefaultTermWait
	}
	// Own both pipes so that reads never race exec.Cmd.Wait closing them.
	childIn, toChild, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	fromChild, childOut, err := os.Pipe()
	if err != nil {
		childIn.Close()
		toChild.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = childIn, childOut
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{childIn, toChild, fromChild, childOut} {
			f.Close()
		}
		// os/exec's error already names the program ("fork/exec PATH: …",
		// `exec: "NAME": …`); saying it again would repeat it.
		return nil, fmt.Errorf("command: %w", err)
	}
	childIn.Close()
	childOut.Close()
	c := &Conn{
		Conn:    stdio.NewConn(fromChild, struct{ io.Writer }{toChild}, &stdio.Options{MaxMessageBytes: opts.MaxMessageBytes}),
		toChild: toChild,
		cmd:     cmd,
		opts:    opts,
		exited:  make(chan struct{}),
	}
	go func() { // owned by c: ends when the child is reaped
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	if ctx.Done() != nil {
		go func() { // owned by c: ends with the child
			select {
			case <-ctx.Done():
				c.Close()
			case <-c.exited:
			}
		}()
	}
	return c, nil
}

// Close shuts the child down: it closes the child's stdin, waits up to
// ExitWait for it to exit, then sends SIGTERM and waits up to TermWait,
// then SIGKILL. It then closes the pipes. It returns the child's exit
// error when the child did not exit cleanly by itself.
func (c *Conn) Close() error {
	c.once.Do(func() {
		c.closeErr = c.shutdown()
	})
	return c.closeErr
}

func (c *Conn) shutdown() error {
	// The child's output stays readable until it has exited, so a server
	// flushing its last messages is not killed by a broken pipe.
	defer c.Conn.Close()
	// Step 1: close the child's input.
	_ = c.toChild.Close()
	if c.waitFor(c.opts.ExitWait) {
		return c.exitErr()
	}
	// Step 2: SIGTERM.
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	if c.waitFor(c.opts.TermWait) {
		return c.neededSignal("SIGTERM")
	}
	// Step 3: SIGKILL.
	_ = c.cmd.Process.Kill()
	if c.waitFor(killWait) {
		return c.neededSignal("SIGKILL")
	}
	return errors.New("command: server did not exit after SIGKILL")
}

func (c *Conn) waitFor(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	}
}

// neededSignal reports that the child exited only after sig. A child that
// handled the signal by exiting cleanly has no exit error to wrap.
func (c *Conn) neededSignal(sig string) error {
	if err := c.exitErr(); err != nil {
		return fmt.Errorf("command: server needed %s: %w", sig, err)
	}
	return fmt.Errorf("command: server needed %s", sig)
}

func (c *Conn) exitErr() error {
	if c.waitErr == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(c.waitErr, &ee) {
		return fmt.Errorf("command: server exited: %s", ee.ProcessState)
	}
	return c.waitErr
}

// Exited is closed once the child process has exited and been reaped.
func (c *Conn) Exited() <-chan struct{} { return c.exited }
