package server

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/mcpkit/mcpkit/store"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server/internal/tasks"
)

// ErrServerClosing is the cancellation cause of requests ended because
// the server is shutting down; a subscriptions/listen stream ended this
// way is answered with its result (a graceful end).
var ErrServerClosing = errors.New("server: the server is shutting down")

// listener is one open subscriptions/listen request (2026-07-28).
type listener struct {
	mu     sync.Mutex      // held while sending: the acknowledgement goes first
	ctx    context.Context // the listen request's (visibility filters read it)
	req    *Request
	filter mcp.SubscriptionFilter // what the server agreed to send
	meta   mcp.Meta               // {subscriptionId: the listen request id}
}

// listen serves subscriptions/listen: acknowledge the agreed filter
// first, then deliver matching change notifications, each tagged with the
// subscription id, until the client ends the stream (HTTP: closes it;
// stdio: notifications/cancelled) or the server shuts down, which ends it
// with the listen result.
func (s *Server) listen(ctx context.Context, req *Request, wp *wireParams) (any, error) {
	var p mcp.SubscriptionsListenParams
	if err := decodeMember("notifications", wp.rareOf().Notifications, &p.Notifications); err != nil {
		return nil, err
	}
	caps := s.Capabilities()
	want := p.Notifications
	var agreed mcp.SubscriptionFilter
	agreed.ToolsListChanged = want.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
	agreed.PromptsListChanged = want.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
	agreed.ResourcesListChanged = want.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
	if caps.Resources != nil && caps.Resources.Subscribe {
		agreed.ResourceSubscriptions = want.ResourceSubscriptions
	}
	// Task status (tasks extension): only for requests that declared it,
	// only tasks the requestor may see.
	if len(want.TaskIDs) > 0 && hasTasksExtension(req) {
		for _, id := range want.TaskIDs {
			if _, err := s.lookupTask(ctx, req, id); err == nil {
				agreed.TaskIDs = append(agreed.TaskIDs, id)
			}
		}
	}
	l := &listener{ctx: ctx, req: req, filter: agreed, meta: mcp.Meta{mcp.MetaKeySubscriptionID: req.id}}
	for _, id := range agreed.TaskIDs { // tasks of other instances: noticed when their owner dies
		defer s.tasks.Watch(id)()
	}
	// Register before acknowledging, so that no change made after the
	// acknowledgement can be missed; deliveries wait for the ack (l.mu).
	l.mu.Lock()
	s.mu.Lock()
	if s.listeners == nil {
		s.listeners = make(map[*listener]struct{})
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	err := req.out.Notify(ctx, req.id, mcp.NotificationSubscriptionsAcknowledged,
		&mcp.SubscriptionsAcknowledgedParams{Meta: l.meta, Notifications: agreed})
	l.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	if err != nil {
		if errors.Is(context.Cause(ctx), ErrServerClosing) {
			// Ended gracefully before it was acknowledged (a stdio client
			// ended its input right after the request): the result still.
			return &mcp.EmptyResult{Meta: l.meta}, nil
		}
		return nil, err
	}
	<-ctx.Done()
	if errors.Is(context.Cause(ctx), ErrServerClosing) {
		return &mcp.EmptyResult{Meta: l.meta}, nil
	}
	return nil, ctx.Err()
}

// notifyListeners delivers a change to every open listen stream whose
// filter asks for it. uri is set for resources/updated.
func (s *Server) notifyListeners(method, uri string, items []Item) {
	s.mu.Lock()
	var targets []*listener
	for l := range s.listeners {
		f := &l.filter
		match := false
		switch method {
		case mcp.NotificationToolsListChanged:
			match = f.ToolsListChanged
		case mcp.NotificationPromptsListChanged:
			match = f.PromptsListChanged
		case mcp.NotificationResourcesListChanged:
			match = f.ResourcesListChanged
		case mcp.NotificationResourcesUpdated:
			match = slices.Contains(f.ResourceSubscriptions, uri)
		}
		if match {
			targets = append(targets, l)
		}
	}
	s.mu.Unlock()
	for _, l := range targets {
		if !s.hears(l.ctx, callerOf(l.ctx, l.req), method, uri, items) {
			continue
		}
		var params any = &mcp.NotificationParams{Meta: l.meta}
		if method == mcp.NotificationResourcesUpdated {
			params = &mcp.ResourceUpdatedNotificationParams{Meta: l.meta, URI: uri}
		}
		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		l.mu.Lock()
		if err := l.req.out.Notify(ctx, l.req.id, method, params); err != nil {
			s.log.Debug("server: listen notification not delivered", "method", method, "err", err)
		}
		l.mu.Unlock()
		cancel()
	}
}

// notifyTaskListeners sends notifications/tasks, the full DetailedTask,
// to every open listen stream whose filter names the task (tasks
// extension).
func (s *Server) notifyTaskListeners(rec *store.TaskRecord) {
	s.mu.Lock()
	var targets []*listener
	for l := range s.listeners {
		if slices.Contains(l.filter.TaskIDs, rec.ID) {
			targets = append(targets, l)
		}
	}
	s.mu.Unlock()
	for _, l := range targets {
		d := tasks.Detailed(rec)
		d.Meta = l.meta
		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		l.mu.Lock()
		if err := l.req.out.Notify(ctx, l.req.id, mcp.NotificationTasks, d); err != nil {
			s.log.Debug("server: task notification not delivered", "task", rec.ID, "err", err)
		}
		l.mu.Unlock()
		cancel()
	}
}

// hasTaskListener reports whether a listen stream here names the task.
func (s *Server) hasTaskListener(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		for _, t := range l.filter.TaskIDs {
			if t == id {
				return true
			}
		}
	}
	return false
}
