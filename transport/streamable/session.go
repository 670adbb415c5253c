package streamable

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// The session's end: lost for good (a 404 to its id, a failed
// re-initialize), or closed by the client with DELETE.

// notFoundError is a 404 to a request that carried session id session.
type notFoundError struct{ session string }

func (e *notFoundError) Error() string {
	return "streamable: session " + e.session + " not found (404)"
}

// loseSession records that the session is lost for good and returns the
// error for Write.
func (c *Conn) loseSession(cause error) error {
	err := fmt.Errorf("%w: %w", ErrSessionLost, cause)
	c.mu.Lock()
	if c.lostErr == nil {
		c.lostErr = err
		c.session = ""
		close(c.lost)
		if c.lis.cancel != nil {
			c.lis.cancel()
		}
	} else {
		err = c.lostErr
	}
	c.mu.Unlock()
	c.log.Warn("streamable: session lost", "err", err)
	return err
}

// Close stops the listener and every stream goroutine, unblocks Read and
// Write, then, unless Options.KeepSession is set, ends the session with
// DELETE (bounded by DeleteTimeout; 404
// and 405 answers are fine). It returns the DELETE's failure, if any, and
// the same on every later call.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		close(c.done)
		c.cancel()
		c.wg.Wait()
		c.mu.Lock()
		session := c.session
		c.mu.Unlock()
		if session != "" && !c.opts.KeepSession {
			c.closeErr = c.deleteSession()
		}
		if c.ownClient {
			c.hc.CloseIdleConnections()
		}
	})
	return c.closeErr
}

func (c *Conn) deleteSession() error {
	ctx, cancel := context.WithTimeout(context.Background(), DeleteTimeout)
	defer cancel()
	req, _, err := c.newRequest(ctx, http.MethodDelete, nil, "", true)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("streamable: DELETE: %w", err)
	}
	defer drainClose(resp.Body)
	switch {
	case resp.StatusCode/100 == 2, resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusMethodNotAllowed:
		return nil
	}
	return &StatusError{Method: http.MethodDelete, StatusCode: resp.StatusCode, Status: resp.Status}
}

// asNotFound is errors.As for *notFoundError. Its target escapes: kept
// out of Write, whose successful writes then allocate nothing for it.
func asNotFound(err error) (*notFoundError, bool) {
	if err == nil {
		return nil, false
	}
	var nf *notFoundError
	ok := errors.As(err, &nf)
	return nf, ok
}
