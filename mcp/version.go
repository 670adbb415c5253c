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
