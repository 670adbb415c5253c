package main

func Example() {
	main()
	// Output:
	// without a token: 401
	// whoami: you are reporting-job
	// tokens issued: 1
}
