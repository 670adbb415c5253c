package main

func Example() {
	main()
	// Output:
	// upstream shop: ready, legacy era, 1 tool(s)
	// modern client (2026-07-28):
	//   asked: Order a teapot?
	//   ordered a teapot
	// legacy client (2025-11-25):
	//   asked: Order a teapot?
	//   ordered a teapot
	// gateway stopped
}
