package main

func Example() {
	main()
	// Output:
	// modern client (2026-07-28): Hello, Ada!
	// legacy client (2025-11-25): Hello, Ada!
	// server stopped
}
