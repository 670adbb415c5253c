module github.com/mcpkit/mcpkit/matrix

go 1.26

replace github.com/mcpkit/mcpkit => ../

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/mcpkit/mcpkit v0.0.0-00010101000000-000000000000
)

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/text v0.14.0 // indirect
)
