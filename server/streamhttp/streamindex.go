package streamhttp

// streamIndex maps keys to a session's streams (httpSession.byReq,
// byID). The first entry lives inline and further ones in a map made for
// them, dropped again once empty: a session with at most one stream at a
// time (sequential requests, the usual case) allocates nothing for its
// index per request, and an idle session holds no map at all.
type streamIndex[K comparable] struct {
	key  K
	one  *stream // the inline entry; nil when free
	more map[K]*stream
}

// get returns the stream at k, or nil.
func (x *streamIndex[K]) get(k K) *stream {
	if x.one != nil && x.key == k {
		return x.one
	}
	return x.more[k]
}

// put sets the stream at k (st is never nil).
func (x *streamIndex[K]) put(k K, st *stream) {
	switch {
	case x.one != nil && x.key == k:
		x.one = st
		return
	case x.more[k] != nil:
	case x.one == nil:
		x.key, x.one = k, st
		return
	case x.more == nil:
		x.more = make(map[K]*stream)
	}
	x.more[k] = st
}

// del removes the stream at k, if any.
func (x *streamIndex[K]) del(k K) {
	if x.one != nil && x.key == k {
		var zero K
		x.key, x.one = zero, nil
		return
	}
	delete(x.more, k)
	if len(x.more) == 0 {
		x.more = nil
	}
}

// len returns the number of streams.
func (x *streamIndex[K]) len() int {
	n := len(x.more)
	if x.one != nil {
		n++
	}
	return n
}

// all returns the streams, in no particular order.
func (x *streamIndex[K]) all() []*stream {
	out := make([]*stream, 0, x.len())
	if x.one != nil {
		out = append(out, x.one)
	}
	for _, st := range x.more {
		out = append(out, st)
	}
	return out
}
