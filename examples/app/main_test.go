package main

func Example() {
	main()
	// Output:
	// client renders views: true; server offers them: true
	//   sales has view ui://charts/sales (125 bytes of HTML, scripts from [https://cdn.example.com])
	//   sales: sales data for the chart: [3, 5, 8]
	// client renders views: false; server offers them: true
	//   sales: sales rose from 3 to 8 this year
}
