package mcp

import "slices"

// Protocol revisions known to this package.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"

	// LatestLegacy is the newest revision that uses the initialize handshake.
	LatestLegacy = Version20251125
	// Latest is the newest revision known to this package.
	Latest = Version20260728
)

// versions lists every known revision, newest first.
var versions = []string{Version20260728, Version20251125, Version20250618, Version20250326, Version20241105}

// Versions returns every known revision, newest first. The slice is a fresh copy.
func Versions() []string { return slices.Clone(versions) }

// LegacyVersions returns the known revisions that use the initialize
// handshake, newest first. The slice is a fresh copy.
func LegacyVersions() []string { return slices.Clone(versions[1:]) }

// IsKnown reports whether v is one of the revisions known to this package.
func IsKnown(v string) bool { return slices.Contains(versions, v) }

// IsModern reports whether v is a well-formed revision date at or after
// 2026-07-28, the first revision without the initialize handshake.
func IsModern(v string) bool { return isRevisionDate(v) && v >= Version20260728 }

// IsLegacy reports whether v is a well-formed revision date before 2026-07-28.
func IsLegacy(v string) bool { return isRevisionDate(v) && v < Version20260728 }

// CompareVersions orders two revision strings by date and returns -1, 0 or +1.
// Revisions are YYYY-MM-DD dates, so the order is the lexical order.
func CompareVersions(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// isRevisionDate reports whether v has the YYYY-MM-DD shape of a revision.
func isRevisionDate(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i != 4 && i != 7 && (v[i] < '0' || v[i] > '9') {
			return false
		}
	}
	return true
}

// atLeast reports whether v is a revision at or after since.
func atLeast(v, since string) bool { return isRevisionDate(v) && v >= since }

// HasAudioContent reports whether revision v knows audio content blocks.
func HasAudioContent(v string) bool { return atLeast(v, Version20250326) }

// HasToolAnnotations reports whether revision v knows Tool.Annotations.
func HasToolAnnotations(v string) bool { return atLeast(v, Version20250326) }

// HasCompletions reports whether revision v knows the completions server capability.
func HasCompletions(v string) bool { return atLeast(v, Version20250326) }

// HasBatching reports whether revision v allows JSON-RPC batches (2025-03-26 only).
func HasBatching(v string) bool { return v == Version20250326 }

// HasStructuredContent reports whether revision v knows Tool.OutputSchema and
// CallToolResult.StructuredContent.
func HasStructuredContent(v string) bool { return atLeast(v, Version20250618) }

// HasTitle reports whether revision v knows the title field of tools, prompts,
// resources and implementations.
func HasTitle(v string) bool { return atLeast(v, Version20250618) }

// HasElicitation reports whether revision v knows elicitation/create.
func HasElicitation(v string) bool { return atLeast(v, Version20250618) }

// HasResourceLinks reports whether revision v knows resource_link content blocks.
func HasResourceLinks(v string) bool { return atLeast(v, Version20250618) }

// HasURLElicitation reports whether revision v knows URL-mode elicitation.
func HasURLElicitation(v string) bool { return atLeast(v, Version20251125) }

// HasIcons reports whether revision v knows icons on implementations, tools,
// prompts and resources.
func HasIcons(v string) bool { return atLeast(v, Version20251125) }

// HasSamplingTools reports whether revision v allows tools in sampling requests.
func HasSamplingTools(v string) bool { return atLeast(v, Version20251125) }

// HasCoreTasks reports whether revision v has tasks in the core protocol
// (2025-11-25 only; later revisions move them to an extension).
func HasCoreTasks(v string) bool { return v == Version20251125 }
