package main

func Example() {
	main()
	// Output:
	// legacy (2025-11-25)
	//   progress 1/3 step 1
	//   progress 2/3 step 2
	//   progress 3/3 step 3
	//   count: counted to three
	//   forever: call ended: true
	//   forever: handler stopped: jsonrpc: request cancelled by the peer
	// modern (2026-07-28)
	//   progress 1/3 step 1
	//   progress 2/3 step 2
	//   progress 3/3 step 3
	//   count: counted to three
	//   forever: call ended: true
	//   forever: handler stopped: jsonrpc: request cancelled by the peer
}
