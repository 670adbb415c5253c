package main

func Example() {
	main()
	// Output:
	// notes: ready 2025-11-25 <nil>
	// docs: ready 2026-07-28 <nil>
	// wiki: down  connection refused
	// tool notes_search (notes's "search"): Searches the notes.
	// tool docs_search (docs's "search"): Searches the docs.
	// skipped wiki (down: true)
	// notes_search: ["call Ada about the search"]
	// docs_search: ["search syntax"]
	// wiki_search: true
	// notes changed its tools
}
