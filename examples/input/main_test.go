package main

func Example() {
	main()
	// Output:
	// modern (2026-07-28):
	//   form "Where to?"
	//   open https://pay.example.com/deposit (Pay the deposit)
	//   model asked "One thing to do in Lisbon?"
	//   roots asked
	//   plan: 2 nights in Lisbon, deposit accept, ride tram 28, notes in file:///home/ada/trips
	// legacy (2025-11-25):
	//   form "Where to?"
	//   open https://pay.example.com/deposit (Pay the deposit)
	//   model asked "One thing to do in Lisbon?"
	//   roots asked
	//   plan: 2 nights in Lisbon, deposit accept, ride tram 28, notes in file:///home/ada/trips
}
