package servers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RawCluster is the ceiling of the multi-instance workloads, as Raw is of
// W1–W3: one instance of a plain net/http + encoding/json server that
// does what a sessionful legacy server with tasks must do on shared
// stores, and nothing else. Sessions: initialize stores the session; a
// request on an instance that has not checked it within a second reads
// it again (GETEX, its TTL restarted). Tasks: a task-augmented tools/call
// of "quick" stores the record and adds it to the session's index (one
// pipeline); the tool runs on its own goroutine and settles the record
// with a compare-and-set script that also publishes the terminal record
// to every instance; tasks/get and tasks/result answer from a terminal
// record the instance holds, else from a GET, and tasks/result waits for
// the settle's broadcast while the task is working. W3's echo is served
// on the same path without a task.
//
// It checks no headers, no schema and no capabilities, offers no
// cancellation, listing, resumability or notifications, and keeps the
// terminal records it learns in a map it empties when full. With rdb
// nil every store is in memory (one instance alone). The returned
// function closes the subscription.
func RawCluster(rdb redis.UniversalClient, prefix string) (http.Handler, func(), error) {
	rc := &rawCluster{rdb: rdb, prefix: prefix, sessions: map[string]time.Time{}, settled: map[string]*rawTask{}, waiters: map[string][]chan struct{}{}}
	closeFn := func() {}
	if rdb == nil {
		rc.mem = map[string][]byte{}
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ps := rdb.Subscribe(ctx, prefix+"settled")
		if _, err := ps.Receive(ctx); err != nil { // the subscription is confirmed
			_ = ps.Close()
			return nil, nil, err
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for m := range ps.Channel() {
				var t rawTask
				if json.Unmarshal([]byte(m.Payload), &t) == nil {
					rc.learn(&t)
				}
			}
		}()
		closeFn = func() { _ = ps.Close(); <-done }
	}
	return http.HandlerFunc(rc.serve), closeFn, nil
}

// rawSettledCap bounds the terminal records one raw instance holds.
const rawSettledCap = 1 << 16

type rawCluster struct {
	rdb    redis.UniversalClient
	prefix string

	mu       sync.Mutex
	sessions map[string]time.Time // session id → last checked
	settled  map[string]*rawTask  // terminal records, by task id
	waiters  map[string][]chan struct{}
	mem      map[string][]byte // rdb == nil: the shared store
}

// rawTaskView is what tasks/get and the created task answer.
type rawTaskView struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval"`
}

// rawTask is a task's record as stored and published: the view, its
// session and, once completed, its tasks/result answer.
type rawTask struct {
	rawTaskView
	Session string          `json:"session"`
	Result  json.RawMessage `json:"result,omitempty"`
}

type rawClusterRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		Arguments EchoIn `json:"arguments"`
		Task      *struct {
			TTL int64 `json:"ttl"`
		} `json:"task"`
		TaskID string `json:"taskId"`
	} `json:"params"`
}

type rawClusterResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rawError       `json:"error,omitempty"`
}

const rawSessionTTL = time.Hour

func (rc *rawCluster) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var req rawClusterRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20)).Decode(&req); err != nil {
		rc.answer(w, json.RawMessage("null"), nil, &rawError{Code: -32700, Message: "Parse error"})
		return
	}
	ctx := r.Context()
	if req.Method == "initialize" {
		sid := rawID()
		if err := rc.newSession(ctx, sid); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Mcp-Session-Id", sid)
		rc.answer(w, req.ID, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"bench-raw-cluster","version":"1.0.0"}}`), nil)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if ok, err := rc.checkSession(ctx, sid); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	} else if !ok {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	if req.ID == nil { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch req.Method {
	case "tools/call":
		if req.Params.Name != "echo" && req.Params.Name != "quick" {
			rc.answer(w, req.ID, nil, &rawError{Code: -32602, Message: "unknown tool"})
			return
		}
		if req.Params.Task == nil {
			rc.answer(w, req.ID, rawEcho(req.Params.Arguments), nil)
			return
		}
		t, err := rc.create(ctx, sid, req.Params.Task.TTL, req.Params.Arguments)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		rc.answer(w, req.ID, map[string]rawTaskView{"task": t.rawTaskView}, nil)
	case "tasks/get", "tasks/result":
		t, err := rc.lookup(ctx, sid, req.Params.TaskID, req.Method == "tasks/result")
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		case t == nil:
			rc.answer(w, req.ID, nil, &rawError{Code: -32602, Message: "unknown task"})
		case req.Method == "tasks/get":
			rc.answer(w, req.ID, t.rawTaskView, nil)
		default:
			rc.answer(w, req.ID, t.Result, nil)
		}
	default:
		rc.answer(w, req.ID, nil, &rawError{Code: -32601, Message: "Method not found"})
	}
}

func (rc *rawCluster) answer(w http.ResponseWriter, id json.RawMessage, result any, e *rawError) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&rawClusterResponse{JSONRPC: "2.0", ID: id, Result: result, Error: e})
}

// rawEcho is the echo tool's CallToolResult, as Raw encodes it.
func rawEcho(in EchoIn) *rawResult {
	o := EchoOut(in)
	out, _ := json.Marshal(o)
	return &rawResult{Content: []rawText{{Type: "text", Text: string(out)}}, StructuredContent: o}
}

func rawID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (rc *rawCluster) newSession(ctx context.Context, sid string) error {
	if rc.rdb != nil {
		if err := rc.rdb.Set(ctx, rc.prefix+"sess:"+sid, "1", rawSessionTTL).Err(); err != nil {
			return err
		}
	}
	rc.mu.Lock()
	rc.sessions[sid] = time.Now()
	rc.mu.Unlock()
	return nil
}

// checkSession reports whether session sid exists: from this instance's
// last check when it is under a second old, else from the store (which
// restarts its TTL).
func (rc *rawCluster) checkSession(ctx context.Context, sid string) (bool, error) {
	now := time.Now()
	rc.mu.Lock()
	at, ok := rc.sessions[sid]
	rc.mu.Unlock()
	if ok && (rc.rdb == nil || now.Sub(at) < time.Second) {
		return true, nil
	}
	if rc.rdb == nil || sid == "" {
		return false, nil
	}
	err := rc.rdb.GetEx(ctx, rc.prefix+"sess:"+sid, rawSessionTTL).Err()
	if err == redis.Nil {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	rc.mu.Lock()
	rc.sessions[sid] = now
	rc.mu.Unlock()
	return true, nil
}

// create stores a working task and starts the tool on its own goroutine.
func (rc *rawCluster) create(ctx context.Context, sid string, ttl int64, in EchoIn) (*rawTask, error) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	t := &rawTask{rawTaskView{TaskID: "task-" + rawID(), Status: "working", CreatedAt: now, LastUpdatedAt: now, TTL: ttl, PollInterval: 500}, sid, nil}
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	life := time.Duration(ttl) * time.Millisecond
	if rc.rdb == nil {
		rc.mu.Lock()
		rc.mem[t.TaskID] = b
		rc.mu.Unlock()
	} else {
		idx := rc.prefix + "tasks:" + sid
		_, err = rc.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, rc.prefix+"task:"+t.TaskID, b, life)
			p.ZAdd(ctx, idx, redis.Z{Score: float64(time.Now().UnixMilli()), Member: t.TaskID})
			p.ExpireNX(ctx, idx, life+time.Second)
			p.ExpireGT(ctx, idx, life+time.Second)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	go rc.run(*t, b, in)
	return t, nil
}

// rawSettle writes a task's terminal record if the stored one is the one
// expected, and publishes it: the compare, the set and the broadcast in
// one step.
var rawSettle = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
redis.call('PUBLISH', ARGV[3], ARGV[2])
return 1
`)

// rawTaskResult is tasks/result's answer: the tool's result with its
// task named in _meta.
type rawTaskResult struct {
	*rawResult
	Meta struct {
		Related struct {
			TaskID string `json:"taskId"`
		} `json:"io.modelcontextprotocol/related-task"`
	} `json:"_meta"`
}

// run is the task: the echo tool, then the settle.
func (rc *rawCluster) run(t rawTask, old []byte, in EchoIn) {
	out := rawTaskResult{rawResult: rawEcho(in)}
	out.Meta.Related.TaskID = t.TaskID
	res, _ := json.Marshal(&out)
	t.Status, t.LastUpdatedAt, t.Result = "completed", time.Now().UTC().Format(time.RFC3339Nano), res
	b, err := json.Marshal(&t)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if rc.rdb == nil {
		rc.mu.Lock()
		ok := string(rc.mem[t.TaskID]) == string(old)
		if ok {
			rc.mem[t.TaskID] = b
		}
		rc.mu.Unlock()
		if !ok {
			return
		}
	} else if n, err := rawSettle.Run(ctx, rc.rdb, []string{rc.prefix + "task:" + t.TaskID}, old, b, rc.prefix+"settled").Int(); err != nil || n != 1 {
		return
	}
	rc.learn(&t)
}

// learn keeps terminal record t and wakes the requests waiting for it.
func (rc *rawCluster) learn(t *rawTask) {
	rc.mu.Lock()
	if len(rc.settled) >= rawSettledCap {
		clear(rc.settled)
	}
	rc.settled[t.TaskID] = t
	ws := rc.waiters[t.TaskID]
	delete(rc.waiters, t.TaskID)
	rc.mu.Unlock()
	for _, c := range ws {
		close(c)
	}
}

// lookup answers session sid's task id: a terminal record held here, else
// the stored one; with wait, a working task is waited for. It answers
// nil for a task that is not found or belongs to another session.
func (rc *rawCluster) lookup(ctx context.Context, sid, id string, wait bool) (*rawTask, error) {
	for {
		var c chan struct{}
		rc.mu.Lock()
		t := rc.settled[id]
		if t == nil && wait {
			c = make(chan struct{})
			rc.waiters[id] = append(rc.waiters[id], c)
		}
		rc.mu.Unlock()
		if t == nil {
			var err error
			if t, err = rc.load(ctx, id); err != nil || t == nil {
				rc.unwait(id, c)
				return nil, err
			}
			if t.Status != "working" {
				rc.unwait(id, c)
				rc.learn(t)
			}
		}
		if t.Session != sid {
			rc.unwait(id, c)
			return nil, nil
		}
		if t.Status != "working" || !wait {
			return t, nil
		}
		select {
		case <-c:
		case <-ctx.Done():
			rc.unwait(id, c)
			return nil, ctx.Err()
		}
	}
}

// unwait removes waiter c of task id, if it is still there.
func (rc *rawCluster) unwait(id string, c chan struct{}) {
	if c == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	ws := rc.waiters[id]
	for i, w := range ws {
		if w == c {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(rc.waiters, id)
	} else {
		rc.waiters[id] = ws
	}
}

// load reads task id from the store; nil when it is not there.
func (rc *rawCluster) load(ctx context.Context, id string) (*rawTask, error) {
	var b []byte
	if rc.rdb == nil {
		rc.mu.Lock()
		b = rc.mem[id]
		rc.mu.Unlock()
	} else {
		var err error
		b, err = rc.rdb.Get(ctx, rc.prefix+"task:"+id).Bytes()
		if err == redis.Nil {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	if b == nil {
		return nil, nil
	}
	var t rawTask
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	return &t, nil
}
