package main

func Example() {
	main()
	// Output:
	// prompt review(language, focus): Asks for a code review.
	// complete language "g": [go gleam]
	// complete language "ha": [haskell]
	// complete language "x": []
	// A go review: Review this go code, correctness first.
	// without language: error -32602
}
