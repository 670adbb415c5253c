package server_test

import (
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/server/streamhttp"
)

func init() {
	server.NewTestHTTPHandler = func(s *server.Server, o *server.HTTPOptions) server.TestHTTPHandler {
		var opts streamhttp.Options
		if o != nil {
			opts.Stateless = o.Stateless
		}
		return streamhttp.NewHandler(s, &opts)
	}
}
