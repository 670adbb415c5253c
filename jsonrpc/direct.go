package jsonrpc

// Responder is implemented by a transport.Conn that reads some responses
// on the goroutine of the Write that asked for them instead of a reader's
// (the Streamable HTTP client: a POST answered with a JSON body). Start
// hands it the Conn's deliver function; the transport calls it with the
// bytes of such a response, which it owns and will not change, before
// its Write returns. deliver decodes the bytes once, under the Conn's
// Limits, and when they are a well-formed response with an id it hands
// it to the call waiting for it (ConnOptions.Observe sees it first) and
// reports true: the call wakes on its own goroutine, with no hand-off
// through Read and the reader goroutine. It reports false, having done
// nothing, for anything else (an error to decode, a request, a
// notification, a response without an id): the transport then goes on as
// without it (it queues the message for Read, or fails the Write). A
// Responder must call deliver only while the Conn may read (after Start)
// and never for a message it also queues for Read.
type Responder interface {
	SetResponder(deliver func(data []byte) bool)
}

// deliverDirect is the deliver function of a Responder (see there).
func (c *Conn) deliverDirect(data []byte) bool {
	msg, derr := decodeIn(data, c.opts.Limits, true)
	if derr != nil || !msg.IsResponse() || !msg.ID.IsValid() {
		return false
	}
	if c.opts.Observe != nil {
		c.opts.Observe(true, data)
	}
	c.deliver(msg)
	return true
}
