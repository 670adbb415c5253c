package main

import (
	"bytes"
	"io"
	"sync"
)

// maxStderrLine bounds the bytes of an upstream's standard error kept
// while waiting for the end of a line; a longer line is passed on cut.
const maxStderrLine = 16 << 10

// lockedWriter serializes writes to one stream (the gateway's log and its
// upstreams' standard error), so that their lines do not interleave. Each
// Write is one write to w: holding the lock across it is the point.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// lineWriter passes an upstream command's standard error to out a whole
// line at a time, each prefixed with the upstream's name. Lines are cut
// at maxStderrLine. The write to out happens outside its lock.
type lineWriter struct {
	prefix string
	out    io.Writer

	mu  sync.Mutex
	buf []byte
}

func (p *lineWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	p.buf = append(p.buf, b...)
	var lines []byte
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 && len(p.buf) >= maxStderrLine {
			i = maxStderrLine - 1
			lines = append(append(append(lines, p.prefix...), p.buf[:i+1]...), '\n')
			p.buf = p.buf[i+1:]
			continue
		}
		if i < 0 {
			break
		}
		lines = append(append(lines, p.prefix...), p.buf[:i+1]...)
		p.buf = p.buf[i+1:]
	}
	p.buf = append([]byte(nil), p.buf...) // let the consumed bytes go
	p.mu.Unlock()
	if len(lines) > 0 {
		if _, err := p.out.Write(lines); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
