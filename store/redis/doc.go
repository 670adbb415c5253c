// Package redisstore keeps the state of mcpkit's legacy HTTP sessions in
// Redis, so that several server instances behind a load balancer (without
// sticky sessions) can serve the same session:
//
//   - SessionStore implements server.SessionStore: each session's
//     negotiated state as JSON under one key, with an idle TTL that every
//     Put refreshes; Delete ends the session on every instance.
//   - EventStore implements server.EventStore: the SSE events of each
//     stream in a capped Redis list, with a per-stream "purged up to"
//     marker so that a replay the store can no longer serve in full fails
//     with server.ErrEventsPurged instead of silently skipping events.
//
// Pass both to server.NewHTTPHandler through server.HTTPOptions:
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	h := server.NewHTTPHandler(srv, &server.HTTPOptions{
//		SessionStore: redisstore.NewSessionStore(rdb, nil),
//		EventStore:   redisstore.NewEventStore(rdb, nil),
//	})
//
// Every key lives under a configurable prefix (default "mcpkit:") and
// carries a TTL, so the data of abandoned sessions expires. The keys of
// one session share a Redis Cluster hash tag ({session id}), so the
// multi-key scripts work on a cluster too.
//
// The package is its own Go module so that the core SDK does not depend
// on a Redis client.
//
// Routing of server→client requests and notifications between instances
// (pub/sub) is not part of this package yet.
package redisstore
