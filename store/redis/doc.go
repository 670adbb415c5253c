// Package redisstore lets several instances of an mcpkit server, behind a
// load balancer without sticky sessions, serve the same legacy sessions
// (2025-11-25 and older) through Redis:
//
//   - SessionStore implements store.SessionStore: each session's
//     negotiated state as JSON under one key, with an idle TTL that every
//     Put and every Get (one per request of the session) restarts;
//     Delete ends the session on every instance.
//   - EventStore implements store.EventStore: the SSE events of each
//     stream in a capped Redis list, with a per-stream "purged up to"
//     marker so that a replay the store can no longer serve in full fails
//     with store.ErrEventsPurged instead of silently skipping events.
//   - Broker implements store.Broker on pub/sub: a client's answer to a
//     server→client request reaches the instance whose handler asked, a
//     stream resumed on another instance is relayed live from its owner,
//     and list changes, resource updates, session state and DELETE reach
//     every instance. Its handler is fed from a bounded queue of its own
//     (BrokerOptions.QueueSize): a handler that falls behind loses what
//     overflows, and the loss is counted and reported as a gap.
//   - TaskStore implements store.TaskStore: each task's record as JSON
//     under one key that expires with the task, so that a result
//     outlives the instance that ran it; Update is a compare-and-set
//     (one script, after one GET), so a cancel and a completion racing on two
//     instances settle the task once; a sorted set per principal (per
//     session without one) lists them. Pass it as server.Options.TaskStore.
//   - ReplayCache remembers DPoP proofs (RFC 9449 jti) across instances
//     with SET NX and the proof's expiry; it satisfies auth.ReplayCache
//     (auth.DPoPOptions) without this package importing auth.
//   - RateLimiter implements ratelimit.Limiter: token buckets as Redis
//     hashes taken from by one script, so that ratelimit.Interceptor's
//     limits hold across instances.
//
// Pass the first three to streamhttp.NewHandler, and give every instance the
// same server.Options.RequestStateKeys:
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	broker, err := redisstore.NewBroker(ctx, rdb, nil) // fails when Redis is unreachable
//	if err != nil { ... }
//	defer broker.Close()
//	h := streamhttp.NewHandler(srv, &streamhttp.Options{
//		SessionStore: redisstore.NewSessionStore(rdb, nil),
//		EventStore:   redisstore.NewEventStore(rdb, nil),
//		Broker:       broker,
//	})
//
// Every key and channel lives under a configurable prefix (default
// "mcpkit:"); every key carries a TTL, so the data of abandoned sessions
// expires. The keys of one session share a Redis Cluster hash tag
// ({session id}), so the multi-key scripts work on a cluster too.
//
// example/cluster runs three instances and a round-robin proxy; the
// design, the failure behaviour and the alternatives rejected are in
// docs/design/multi-instance.md. Redis must be private to the instances:
// whatever can publish on their channels can answer their sessions'
// server→client requests.
//
// The package is its own Go module so that the core SDK does not depend
// on a Redis client. It imports the deployment seams (package store) and
// the Limiter of package ratelimit, never the server.
package redisstore
