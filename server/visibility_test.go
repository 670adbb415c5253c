package server

import (
	"slices"
	"testing"
)

// TestPageKept: a filtered list fills every page with visible entries
// and names a next page only while a visible entry remains.
func TestPageKept(t *testing.T) {
	var r registry[string]
	entries := map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		entries[k] = k
	}
	r.put(entries)
	visible := func(k string) bool { return k != "b" && k != "c" && k != "g" && k != "h" } // a d e f
	var got [][]string
	var cursor *string
	for range 10 {
		page, next, err := r.page(cursor, 2, visible)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page)
		if next == nil {
			break
		}
		cursor = next
	}
	if want := [][]string{{"a", "d"}, {"e", "f"}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("pages %v, want %v", got, want)
	}
	page, next, err := r.page(nil, 10, func(string) bool { return false })
	if err != nil || len(page) != 0 || next != nil {
		t.Fatalf("everything hidden: %v %v %v", page, next, err)
	}
}
