package main

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json"

	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

func addResources(s *server.Server) {
	_ = s.AddResource(&mcp.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{
				URI: req.Params.URI, MIMEType: "text/plain", Text: "This is the content of the static text resource.",
			}}}, nil
		})
	_ = s.AddResource(&mcp.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource", MIMEType: "image/png"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.BlobResourceContents{
				URI: req.Params.URI, MIMEType: "image/png", Blob: pngImage,
			}}}, nil
		})
	_ = s.AddResource(&mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource clients may subscribe to", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{
				URI: req.Params.URI, MIMEType: "text/plain", Text: "Watched resource content",
			}}}, nil
		})
	_ = s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", Description: "Data by id", MIMEType: "application/json"},
		func(ctx context.Context, req *server.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := req.Vars["id"]
			data, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": fmt.Sprintf("Data for ID: %s", id)})
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: mcp.ResourceContentsList{&mcp.TextResourceContents{
				URI: req.Params.URI, MIMEType: "application/json", Text: string(data),
			}}}, nil
		})
}
