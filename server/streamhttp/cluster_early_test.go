package streamhttp

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// subscribable serves file:///r, which a session may subscribe to.
func subscribable(s *server.Server) {
	s.AddResource(&mcp.Resource{URI: "file:///r", Name: "r"}, func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
}

// TestClusterEarlyNotificationHeldForGETElsewhere: in a deployment, an
// update sent before the client opened its GET stream reaches that
// stream when it opens on another instance (a subscriber's first update
// was lost when the client's GET came after it: the instance that sent
// it knew of no stream and dropped it). The instance that made the
// session holds the message, whether it sent it or a copy elsewhere did,
// and forwards it when a stream opens elsewhere.
func TestClusterEarlyNotificationHeldForGETElsewhere(t *testing.T) {
	t.Run("sent where the session was made", func(t *testing.T) {
		a, b, _, _ := clusterPair(t, subscribable)
		sid := a.Initialize("{}")
		a.Subscribe(sid, "file:///r")
		a.srv.ResourceUpdated("file:///r") // written before it returns: no stream anywhere yet
		get := b.OpenSSE(b.Do(http.MethodGet, sid, ""))
		defer get.Close()
		get.Prime(0)
		get.MessageFrame(t, mcp.NotificationResourcesUpdated)
	})
	t.Run("sent by a copy", func(t *testing.T) {
		a, b, _, _ := clusterPair(t, subscribable)
		sid := a.Initialize("{}")
		b.Subscribe(sid, "file:///r")
		b.srv.ResourceUpdated("file:///r")
		get := b.OpenSSE(b.Do(http.MethodGet, sid, ""))
		defer get.Close()
		get.Prime(0)
		get.MessageFrame(t, mcp.NotificationResourcesUpdated)
	})
}
