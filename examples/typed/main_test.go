package main

func Example() {
	main()
	// Output:
	// input schema:  {"type":"object","properties":{"a":{"type":"number","description":"dividend"},"b":{"type":"number","description":"divisor"}},"required":["a","b"],"additionalProperties":false}
	// output schema: {"type":"object","properties":{"quotient":{"type":"number"}},"required":["quotient"],"additionalProperties":false}
	// 1 / 8 = 0.125
	// tool error from divide: division by zero
	// tool error from divide: invalid arguments: /a: must be number, got string
	// broken: result does not match its output schema
}
