module github.com/mcpkit/mcpkit

go 1.26

require (
	github.com/go-jose/go-jose/v4 v4.1.9
	github.com/go-json-experiment/json v1.27.2
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/yosida95/uritemplate/v3 v3.0.2
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/term v0.30.0
	golang.org/x/text v0.14.0
)

require golang.org/x/sys v0.31.0 // indirect
