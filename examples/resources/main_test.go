package main

func Example() {
	main()
	// Output:
	// legacy (2025-11-25)
	//   resource notes://all (all notes)
	//   template notes://tag/{tag} (notes by tag)
	//   notes://tag/work: tagged work: buy milk
	//   notes://tag/home: not found
	//   updated: notes://all
	//   notes://all: buy milk; note from 2025-11-25
	// modern (2026-07-28)
	//   resource notes://all (all notes)
	//   template notes://tag/{tag} (notes by tag)
	//   notes://tag/work: tagged work: buy milk; note from 2025-11-25
	//   notes://tag/home: not found
	//   updated: notes://all
	//   notes://all: buy milk; note from 2025-11-25; note from 2026-07-28
}
