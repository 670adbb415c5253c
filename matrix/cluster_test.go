package matrix

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
	"github.com/mcpkit/mcpkit/store"
	redisstore "github.com/mcpkit/mcpkit/store/redis"
)

// The cluster topology: two instances of the fixture sharing Redis
// (sessions, events, the broker, tasks) behind a proxy that sends each HTTP
// request to the next instance in turn. Its restart cells build a cluster
// of their own, so that restarting an instance disturbs no other cell.

var clusterTopology = topology{Name: "cluster(redis,2)", Cluster: true}

// errNoRedis: redis-server is not installed; the cluster's cells are then
// skipped, unless MCPKIT_REQUIRE_REDIS=1 makes that a failure.
var errNoRedis = errors.New("redis-server is not installed (Debian package redis-server): the cluster topology skips")

// stateKey is the request-state key the instances share (sealed MRTR
// state and task ids must open on any of them).
var stateKey = server.RequestStateKey([]byte("matrix-cluster-state-key-32bytes"))

// startRedis starts a throwaway redis-server on a unix socket in dir,
// without persistence, stopped when the test ends.
func startRedis(t testing.TB) (*redis.Client, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errNoRedis
	}
	dir, err := os.MkdirTemp("", "matrix-redis")
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	t.Cleanup(func() { rdb.Close() })
	// redis-server gives no readiness signal but its socket: poll PING
	// until it answers (a start-up wait, not a synchronisation of cells).
	deadline := time.Now().Add(hangGuard)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return rdb, nil
		}
		select {
		case <-exited:
			return nil, errors.New("redis-server exited at start")
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("redis-server did not answer PING: %w", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// node is one instance: its fixture and handler, replaced by a restart.
type node struct {
	fx     *fixture
	h      *streamhttp.Handler
	broker *redisstore.Broker
}

// cluster is two instances and the round-robin proxy in front of them.
type cluster struct {
	rdb    *redis.Client
	prefix string
	subs   []string
	probes *probes
	group  *group

	mu    sync.Mutex
	nodes []*node
	next  atomic.Uint64
	ts    *httptest.Server
}

var clusterSeq atomic.Uint64

// newCluster starts two instances under a key prefix of their own.
func newCluster(rdb *redis.Client, subs []string) (*cluster, error) {
	c := &cluster{rdb: rdb, prefix: fmt.Sprintf("matrix%d:", clusterSeq.Add(1)), subs: subs, probes: &probes{}, group: &group{}}
	for i := range 2 {
		n, err := c.start(i)
		if err != nil {
			c.close()
			return nil, err
		}
		c.nodes = append(c.nodes, n)
	}
	c.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(c.next.Add(1) % uint64(len(c.nodes)))
		c.mu.Lock()
		h := c.nodes[i].h
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	return c, nil
}

// start builds instance i: a fixture server over the shared stores and a
// handler with a broker of its own.
func (c *cluster) start(i int) (*node, error) {
	fx, err := newInstance(c.subs, c.probes, c.group, i, &server.Options{
		TaskStore:        redisstore.NewTaskStore(c.rdb, &redisstore.TaskStoreOptions{Prefix: c.prefix}),
		RequestStateKeys: []server.RequestStateKey{stateKey},
	})
	if err != nil {
		return nil, err
	}
	b, err := redisstore.NewBroker(context.Background(), c.rdb, &redisstore.BrokerOptions{Prefix: c.prefix})
	if err != nil {
		return nil, err
	}
	var sessions store.SessionStore = redisstore.NewSessionStore(c.rdb, &redisstore.SessionStoreOptions{Prefix: c.prefix})
	h := streamhttp.NewHandler(fx.srv, &streamhttp.Options{
		SessionStore: sessions,
		EventStore:   redisstore.NewEventStore(c.rdb, &redisstore.EventStoreOptions{Prefix: c.prefix}),
		Broker:       b,
		SSEAfter:     -1,
	})
	return &node{fx: fx, h: h, broker: b}, nil
}

// restart stops instance i, as a crash would end its work, and starts a
// fresh one in its place.
func (c *cluster) restart(i int) error {
	n, err := c.start(i)
	if err != nil {
		return err
	}
	c.mu.Lock()
	old := c.nodes[i]
	c.nodes[i] = n
	c.mu.Unlock()
	old.stop()
	return nil
}

func (n *node) stop() {
	_ = n.h.Close()
	_ = n.broker.Close()
}

func (c *cluster) close() {
	if c.ts != nil {
		c.ts.CloseClientConnections()
		c.ts.Close()
	}
	c.mu.Lock()
	nodes := c.nodes
	c.nodes = nil
	c.mu.Unlock()
	for _, n := range nodes {
		n.stop()
	}
}

// endpoint is the cluster as the cells dial it: its Streamable HTTP URL.
func (c *cluster) endpoint() *endpoint {
	u := c.ts.URL + "/mcp"
	return &endpoint{srv: c.nodes[0].fx.srv, urls: map[string]string{
		urlKey(httpJSON, false): u, urlKey(httpSSE, false): u, urlKey(httpJSON, true): u, urlKey(httpSSE, true): u,
	}}
}

// buildCluster starts the cluster topology for the test's lifetime.
func buildCluster(t testing.TB, subs []string) (*built, error) {
	rdb, err := startRedis(t)
	if err != nil {
		return nil, err
	}
	c, err := newCluster(rdb, subs)
	if err != nil {
		return nil, err
	}
	t.Cleanup(c.close)
	return &built{ep: c.endpoint(), fx: c.nodes[0].fx, cluster: c}, nil
}
