// Command apirecord checks or rewrites the API record (api/*.txt) of
// every module of the repository: the core module, otel and store/redis.
// Run it from the repository root:
//
//	go run ./internal/apirecord/apirecord      # check: exit 1 and the difference when they disagree
//	go run ./internal/apirecord/apirecord -w   # rewrite the records
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcpkit/mcpkit/internal/apirecord"
)

func main() {
	write := flag.Bool("w", false, "rewrite the records instead of checking them")
	flag.Parse()
	failed := false
	for _, dir := range apirecord.Modules {
		got, err := apirecord.Generate(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "apirecord:", err)
			os.Exit(2)
		}
		if *write {
			if err := apirecord.Write(dir, got); err != nil {
				fmt.Fprintln(os.Stderr, "apirecord:", err)
				os.Exit(2)
			}
			fmt.Printf("%s: %d packages recorded in %s\n", dir, len(got), filepath.Join(dir, apirecord.Dir))
			continue
		}
		want, err := apirecord.Read(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "apirecord:", err)
			os.Exit(2)
		}
		if d := apirecord.Diff(want, got); d != "" {
			fmt.Printf("module in %s:\n%s", dir, d)
			failed = true
		}
	}
	if failed {
		fmt.Println("\nIf the change is meant, run `" + apirecord.Command + "` and add a line for it to CHANGELOG.md (## [Unreleased]).")
		os.Exit(1)
	}
}
