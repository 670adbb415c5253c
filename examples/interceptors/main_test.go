package main

func Example() {
	main()
	// Output:
	// level=INFO msg=served era=legacy method=initialize name="" trace=t-1 err=<nil>
	// level=INFO msg=served era=legacy method=logging/setLevel name="" trace=t-2 err=<nil>
	// level=INFO msg=served era=legacy method=tools/call name=weather trace=t-3 err=<nil>
	// client got log info from weather: map[city:Oslo msg:fetching]
	// client got result: sunny in Oslo
	// level=INFO msg=served era=modern method=tools/call name=weather trace=t-1 err=<nil>
	// client got log info from weather: map[city:Oslo msg:fetching]
	// client got result: sunny in Oslo
}
