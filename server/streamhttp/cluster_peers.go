package streamhttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpkit/mcpkit/internal/jsonwalk"
	"github.com/mcpkit/mcpkit/internal/wire"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/seam"
)

// Kinds of cluster messages that carry the protocol server's own
// messages between instances (seam.Peers: tasks across instances).
const (
	kindPeerCall  = "pcall"  // a call for the receiver's protocol server
	kindPeerReply = "preply" // its answer
	kindPeerCast  = "pcast"  // a broadcast for every protocol server
)

// peerProbeInterval is how often a peer call checks that the instance
// it waits on is still there; a gone instance ends the call.
const peerProbeInterval = relayProbeInterval

// errPeerCallsClosed ends the peer calls of a closed cluster.
var errPeerCallsClosed = errors.New("streamhttp: the handler is closed")

// peers is the cluster as seam.Peers: the protocol server's calls and
// broadcasts to the other instances, over the broker.
type peers struct{ c *cluster }

var (
	_ seam.CastPeers    = peers{}
	_ seam.SessionPeers = peers{}
)

func (p peers) ID() string { return p.c.id }

// Call implements seam.Peers: the message goes to the instance with a
// tag, and the answer comes back under it. The instance is probed while
// the call waits, so that one killed mid-call ends it (ok false).
func (p peers) Call(ctx context.Context, to string, msg []byte) ([]byte, bool, error) {
	c := p.c
	tag := rand.Text()[:16]
	ch := make(chan []byte, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, false, errPeerCallsClosed
	}
	if c.calls == nil {
		c.calls = make(map[string]chan []byte)
	}
	c.calls[tag] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.calls, tag)
		c.mu.Unlock()
	}()
	ok, err := c.send(ctx, to, &clusterMsg{Kind: kindPeerCall, Tag: tag, Data: string(msg)})
	if err != nil || !ok {
		return nil, false, err
	}
	probe := time.NewTicker(peerProbeInterval)
	defer probe.Stop()
	for {
		select {
		case reply := <-ch:
			return reply, true, nil
		case <-probe.C:
			if ok, err := c.send(ctx, to, &clusterMsg{Kind: kindProbe, Tag: tag}); err == nil && !ok {
				return nil, false, nil
			}
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-c.done:
			return nil, false, errPeerCallsClosed
		}
	}
}

// CastTarget implements seam.CastPeers: the broker's, when it has one.
func (p peers) CastTarget() any {
	if t, ok := p.c.b.(interface{ CastTarget() any }); ok {
		return t.CastTarget()
	}
	return nil
}

// Frame implements seam.CastPeers: msg as Broadcast publishes it.
func (p peers) Frame(msg []byte) ([]byte, error) {
	if b, ok := appendPeerCast(make([]byte, 0, len(castHead)+len(p.c.id)+len(castMid)+len(msg)+len(msg)/8+8), p.c.id, msg); ok {
		return b, nil
	}
	return p.c.encode(&clusterMsg{Kind: kindPeerCast, Data: string(msg)})
}

// appendPeerCast appends the frame of a peers' broadcast from instance
// from, byte for byte what encode writes, without json.Marshal: a frame
// is made at every task's end, on the goroutine that settles it, where
// the encoder's depth was what grew that goroutine's stack. false for an
// empty msg or text that is not UTF-8 (encode's to handle).
func appendPeerCast(b []byte, from string, msg []byte) ([]byte, bool) {
	if len(msg) == 0 {
		return b, false
	}
	b = append(b, `{"k":"`+kindPeerCast+`","from":`...)
	b, err := jsontext.AppendQuote(b, from)
	if err != nil {
		return b, false
	}
	b = append(b, castMid[1:]...) // the sender's closing quote is AppendQuote's
	if b, err = jsontext.AppendQuote(b, msg); err != nil {
		return b, false
	}
	return append(b, '}'), true
}

// PushSession implements seam.SessionPeers: what a kindNotify message
// does on the instance that holds the session's standalone stream, for
// a notification every instance was sent anyway (a peers' broadcast).
func (p peers) PushSession(sid, method string, params seam.NotifyParams) bool {
	st := p.c.h.localStandalone(sid)
	if st == nil {
		return false
	}
	msg, err := wire.EncodeRequest(mcp.ID{}, method, params.NotifyParams())
	if err != nil {
		return false
	}
	st.push(msg, false)
	return true
}

// Broadcast implements seam.Peers.
func (p peers) Broadcast(ctx context.Context, msg []byte) error {
	b, err := p.Frame(msg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, p.c.h.opts.StoreTimeout)
	defer cancel()
	return p.c.b.Broadcast(ctx, b)
}

// receivePeer handles the peer kinds of cluster messages (on the
// broker's delivery goroutine); false for other kinds.
func (c *cluster) receivePeer(m *clusterMsg) bool {
	switch m.Kind {
	case kindPeerCall:
		c.mu.Lock()
		ph, ctx := c.peer, c.peerCtx
		c.mu.Unlock()
		if ph.Serve == nil {
			return true
		}
		c.goTracked(func() {
			reply := ph.Serve(ctx, []byte(m.Data))
			_, _ = c.send(ctx, m.From, &clusterMsg{Kind: kindPeerReply, Tag: m.Tag, Data: string(reply)})
		})
	case kindPeerReply:
		c.mu.Lock()
		ch := c.calls[m.Tag]
		c.mu.Unlock()
		if ch != nil {
			select {
			case ch <- []byte(m.Data):
			default:
			}
		}
	case kindPeerCast:
		c.deliverCast([]byte(m.Data))
	default:
		return false
	}
	return true
}

// deliverCast hands a peers' broadcast to the protocol server.
func (c *cluster) deliverCast(msg []byte) {
	c.mu.Lock()
	ph := c.peer
	c.mu.Unlock()
	if ph.Deliver != nil {
		ph.Deliver(msg)
	}
}

// Every peers' broadcast (kindPeerCast) is framed by encode as
// castHead, the sender's id, castMid, then the message as a JSON string
// and "}": json.Marshal's order of clusterMsg's members, the others empty.
const (
	castHead = `{"k":"` + kindPeerCast + `","from":"`
	castMid  = `","data":`
)

// parsePeerCast reads a peers' broadcast framed as encode frames it, the
// one message that every instance receives for every task's end, without
// the reflection of json.Unmarshal: the sender's id and the message. ok
// is false for any other frame, which receive decodes the general way: a
// frame it answers ok for decodes there to the same From and Data.
func parsePeerCast(raw []byte) (from, data []byte, ok bool) {
	if !bytes.HasPrefix(raw, []byte(castHead)) {
		return nil, nil, false
	}
	// The sender's id: a string without escapes (jsonwalk's Plain).
	w := jsonwalk.Walker{B: raw, I: len(castHead) - 1}
	if from, ok = w.Plain(); !ok {
		return nil, nil, false
	}
	rest, ok := bytes.CutPrefix(raw[w.I-1:], []byte(castMid))
	if !ok {
		return nil, nil, false
	}
	lit, ok := bytes.CutSuffix(rest, []byte("}"))
	if !ok {
		return nil, nil, false
	}
	// AppendUnquote takes exactly one string literal: trailing bytes, an
	// escaped last quote or invalid UTF-8 fail it.
	data, err := jsontext.AppendUnquote(nil, lit)
	if err != nil {
		return nil, nil, false
	}
	return from, data, true
}

// attachPeers makes the protocol server an instance of the deployment.
func (c *cluster) attachPeers() {
	ph, detach := c.h.p.AttachPeers(peers{c})
	ctx, cancel := context.WithCancel(context.Background())
	c.mu.Lock()
	c.peer, c.peerCtx, c.peerStop = ph, ctx, func() { detach(); cancel() }
	c.mu.Unlock()
}
