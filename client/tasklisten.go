package client

import (
	"context"
	"slices"

	"github.com/mcpkit/mcpkit/mcp"
)

// listenTask reports a 2026 task's notifications/tasks to fn while the
// caller waits for its outcome (await): every change the server
// announces — a new statusMessage carrying a progress step, input
// required, the end — reaches fn as it happens, where polls at the
// server's pollIntervalMs would see only the state of the moment. The
// polls go on regardless (they fetch the outcome); a server that does not
// agree to the filter (no subscriptions/listen, or not for this task)
// leaves fn to them. The returned func ends the subscription and waits
// for its goroutine.
func (c *Client) listenTask(ctx context.Context, id string, fn func(*Task)) func() {
	if fn == nil || id == "" || c.Era() != EraModern {
		return func() {}
	}
	lctx, cancel := context.WithCancel(ctx)
	sub, err := c.Listen(lctx, mcp.SubscriptionFilter{TaskIDs: []string{id}})
	if err != nil {
		cancel()
		c.log.Debug("client: listening for a task's changes; polling only", "task", id, "err", err)
		return func() {}
	}
	if !slices.Contains(sub.Filter().TaskIDs, id) {
		cancel()
		_ = sub.Close()
		return func() {}
	}
	done := make(chan struct{})
	go func() { // owned by the returned func, which ends the subscription and waits
		defer close(done)
		for n := range sub.Notifications() {
			if n.Method != mcp.NotificationTasks {
				continue
			}
			if t, err := decodeTask(n.Params); err == nil && t.ID == id {
				fn(t)
			}
		}
	}()
	return func() {
		cancel()
		_ = sub.Close()
		<-done
	}
}
