package taskrun

import "testing"

// BenchmarkParseStatusCast: a task's end broadcast read in one pass
// against deliverPeer's general path (json.Unmarshal, then the record).
func BenchmarkParseStatusCast(b *testing.B) {
	raw := statusCasts(b)[1] // a completed task's, with a sender
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok := parseStatusCast(raw); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok := generalStatusCast(raw); !ok {
				b.Fatal("declined")
			}
		}
	})
}
