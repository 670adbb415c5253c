package streamhttp

import (
	"testing"

	"github.com/go-json-experiment/json"
)

// BenchmarkParsePeerCast: a peers' broadcast (a task's end) read by
// parsePeerCast against json.Unmarshal of the frame.
func BenchmarkParsePeerCast(b *testing.B) {
	c := &cluster{id: "6NVUEQW4YG"}
	raw, err := c.encode(&clusterMsg{Kind: kindPeerCast, Data: castMessages[0]})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok := parsePeerCast(raw); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m clusterMsg
			if err := json.Unmarshal(raw, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
