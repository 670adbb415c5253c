package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpkit/mcpkit/server/streamhttp"
)

// corsOptions returns the CORS policy of "mcpkit serve --http" for the
// origins of --cors-origin, nil (off) without any. Each must be "*" or
// a web origin: http or https, a host, an optional port, nothing else.
func corsOptions(origins []string) (*streamhttp.CORSOptions, error) {
	if len(origins) == 0 {
		return nil, nil
	}
	for _, o := range origins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			strings.TrimSuffix(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("--cors-origin %q: want an origin such as https://app.example.com or http://localhost:3000 (scheme, host, optional port), or *", o)
		}
	}
	return &streamhttp.CORSOptions{AllowedOrigins: origins}, nil
}

// corsLines says, for the startup message, which web pages may call the
// endpoint from a browser.
func corsLines(c *streamhttp.CORSOptions) []string {
	if c == nil {
		return nil
	}
	line := "mcpkit: CORS: pages of " + strings.Join(c.AllowedOrigins, ", ") + " may call the endpoint from a browser"
	for _, o := range c.AllowedOrigins {
		if o == "*" {
			line += " (* is every web origin, without cookies: any site the user visits may call this server)"
			break
		}
	}
	return []string{line}
}
