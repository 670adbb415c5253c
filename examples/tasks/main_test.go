package main

func Example() {
	main()
	// Output:
	// legacy (2025-11-25)
	//   started: working
	//   result: {"summary":"2026: 12 months, all green"}
	//   run: {"summary":"2027: 12 months, all green"}
	//   watch stopped: server: task cancelled
	//   watch: cancelled
	// modern (2026-07-28)
	//   started: working
	//   result: {"summary":"2026: 12 months, all green"}
	//   run: {"summary":"2027: 12 months, all green"}
	//   watch stopped: server: task cancelled
	//   watch: cancelled
}
