package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary stand in for the program: the example
// launches itself (os.Executable) with -serve as its server process.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == serverFlag {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func Example() {
	main()
	// Output:
	// connected to demo-server 1.0.0, protocol 2026-07-28
	// tools:
	//   add     Adds two numbers.
	//   count   Counts to three, reporting progress.
	//   signup  Asks the user for a name, then welcomes them.
	// add(2, 40) -> 42
	//   progress 1/3: counted 1
	//   progress 2/3: counted 2
	//   progress 3/3: counted 3
	// count -> counted to three
	//   server asks: "What should we call you?" -> answering name=Ada (plan left to its default)
	// signup -> Welcome, Ada (free plan)!
	// demo://readme -> "mcpkit speaks MCP."
}
