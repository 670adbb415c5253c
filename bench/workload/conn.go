package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// Conn is one keep-alive HTTP/1.1 connection that sends pre-built
// requests and reads each answer into a reused buffer. It understands
// Content-Length and chunked bodies, which is all Go servers send.
type Conn struct {
	addr string
	c    net.Conn
	br   *bufio.Reader
	body []byte
	// Header values of the last answer that the benchmark needs.
	SessionID   string
	ContentType string
}

// Dial connects to addr (host:port).
func Dial(addr string) (*Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	return &Conn{addr: addr, c: c, br: bufio.NewReaderSize(c, 16<<10), body: make([]byte, 0, 4096)}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Do sends req (a whole HTTP request) and returns the status and the body
// (valid until the next call). The connection is unusable after an error.
func (c *Conn) Do(req []byte, deadline time.Time) (int, []byte, error) {
	if err := c.c.SetDeadline(deadline); err != nil {
		return 0, nil, err
	}
	if _, err := c.c.Write(req); err != nil {
		return 0, nil, err
	}
	return c.read()
}

var (
	hdrContentLength = []byte("content-length")
	hdrTransferEnc   = []byte("transfer-encoding")
	hdrSessionID     = []byte("mcp-session-id")
	hdrContentType   = []byte("content-type")
	hdrConnection    = []byte("connection")
)

func (c *Conn) readLine() ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

func (c *Conn) read() (int, []byte, error) {
	line, err := c.readLine()
	if err != nil {
		return 0, nil, err
	}
	// HTTP/1.1 200 OK
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, nil, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, nil, fmt.Errorf("bad status line %q", line)
	}
	length, chunked, closing := -1, false, false
	c.SessionID, c.ContentType = "", ""
	for {
		line, err := c.readLine()
		if err != nil {
			return 0, nil, err
		}
		if len(line) == 0 {
			break
		}
		i := bytes.IndexByte(line, ':')
		if i < 0 {
			continue
		}
		k, v := bytes.ToLower(bytes.TrimSpace(line[:i])), bytes.TrimSpace(line[i+1:])
		switch {
		case bytes.Equal(k, hdrContentLength):
			if length, err = strconv.Atoi(string(v)); err != nil {
				return 0, nil, fmt.Errorf("bad Content-Length %q", v)
			}
		case bytes.Equal(k, hdrTransferEnc):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.Equal(k, hdrSessionID):
			c.SessionID = string(v)
		case bytes.Equal(k, hdrContentType):
			c.ContentType = string(v)
		case bytes.Equal(k, hdrConnection):
			closing = bytes.EqualFold(v, []byte("close"))
		}
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		for {
			line, err := c.readLine()
			if err != nil {
				return 0, nil, err
			}
			if i := bytes.IndexByte(line, ';'); i >= 0 {
				line = line[:i]
			}
			n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
			if err != nil {
				return 0, nil, fmt.Errorf("bad chunk size %q", line)
			}
			if n == 0 {
				for { // trailers
					line, err := c.readLine()
					if err != nil {
						return 0, nil, err
					}
					if len(line) == 0 {
						break
					}
				}
				break
			}
			if err := c.readN(int(n)); err != nil {
				return 0, nil, err
			}
			if _, err := c.br.Discard(2); err != nil {
				return 0, nil, err
			}
		}
	case length >= 0:
		if err := c.readN(length); err != nil {
			return 0, nil, err
		}
	default:
		if status == 202 || status == 204 || status == 304 {
			break
		}
		return 0, nil, errors.New("answer without Content-Length or chunked body")
	}
	if closing {
		return status, c.body, errors.New("server closed the connection")
	}
	return status, c.body, nil
}

func (c *Conn) readN(n int) error {
	start := len(c.body)
	if cap(c.body)-start < n {
		nb := make([]byte, start, 2*(start+n))
		copy(nb, c.body)
		c.body = nb
	}
	c.body = c.body[:start+n]
	_, err := io.ReadFull(c.br, c.body[start:])
	return err
}

var initializeOK = []byte(`"protocolVersion":"` + Legacy + `"`)

// OpenSession sends initialize and notifications/initialized on c and
// returns the session id.
func (c *Conn) OpenSession(path string, deadline time.Time) (string, error) {
	st, body, err := c.Do(BuildRequest(c.addr, path, LegacyHeaders, Initialize), deadline)
	if err != nil {
		return "", fmt.Errorf("initialize: %w", err)
	}
	if st != 200 || c.SessionID == "" || !bytes.Contains(body, initializeOK) || bytes.Contains(body, rpcError) {
		return "", fmt.Errorf("initialize: status %d, session %q: %s", st, c.SessionID, Trim(string(body)))
	}
	sid := c.SessionID
	st, body, err = c.Do(BuildRequest(c.addr, path, append([][2]string{{"Mcp-Session-Id", sid}}, LegacyHeaders...), Initialized), deadline)
	if err != nil {
		return "", fmt.Errorf("initialized: %w", err)
	}
	if st != 202 && st != 200 {
		return "", fmt.Errorf("initialized: status %d: %s", st, Trim(string(body)))
	}
	return sid, nil
}

// Request returns the bytes of w's request to addr for a session sid
// (empty when w has none).
func (w Workload) Request(addr, sid string) []byte {
	hs := w.Headers
	if sid != "" {
		hs = append([][2]string{{"Mcp-Session-Id", sid}}, hs...)
	}
	return BuildRequest(addr, w.Path, hs, w.Body)
}

// Cycle runs one W4 iteration on c: open a session on path, call it with
// body and headers, check the answer, and delete the session.
func (c *Conn) Cycle(w Workload, deadline time.Time) error {
	sid, err := c.OpenSession(w.Path, deadline)
	if err != nil {
		return err
	}
	st, body, err := c.Do(w.Request(c.addr, sid), deadline)
	if err != nil {
		return err
	}
	if err := w.Check(st, body); err != nil {
		return err
	}
	st, body, err = c.Do(BuildDelete(c.addr, w.Path, sid), deadline)
	if err != nil {
		return fmt.Errorf("DELETE: %w", err)
	}
	if st != 200 && st != 202 && st != 204 {
		return fmt.Errorf("DELETE: status %d: %s", st, Trim(string(body)))
	}
	return nil
}

// ListCycle runs one W7 iteration on c: every page of tools/list.
func (c *Conn) ListCycle(w Workload, deadline time.Time) error {
	return ListAll(func(body []byte) (int, []byte, error) {
		return c.Do(BuildRequest(c.addr, w.Path, w.Headers, body), deadline)
	})
}

// Addr is the address c is connected to.
func (c *Conn) Addr() string { return c.addr }

// MRTRCycle runs one W8 iteration on c: both rounds.
func (c *Conn) MRTRCycle(w Workload, deadline time.Time) error {
	return MRTRPair(func(body []byte) (int, []byte, error) {
		return c.Do(BuildRequest(c.addr, w.Path, w.Headers, body), deadline)
	})
}
