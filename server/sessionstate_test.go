package server

import "testing"

// TestSessionRestoreSkipsOlder: a state older than the one a copy of the
// session holds does not replace it; the same or a newer one does.
func TestSessionRestoreSkipsOlder(t *testing.T) {
	ss := newSession(New(nil))
	ss.addSubscription("test://a")
	older := ss.snapshot()
	ss.addSubscription("test://b")
	newer := ss.snapshot()
	if older.Revision >= newer.Revision {
		t.Fatalf("revisions %d then %d: not increasing", older.Revision, newer.Revision)
	}
	ss.restore(older)
	if !ss.isSubscribed("test://b") {
		t.Fatal("an older state undid a newer change")
	}
	other := newSession(New(nil))
	other.restore(older)
	other.restore(newer)
	if !other.isSubscribed("test://b") || other.rev != newer.Revision {
		t.Fatalf("a newer state was not applied (revision %d)", other.rev)
	}
	other.restore(newer) // again: the same revision applies
	if !other.isSubscribed("test://a") {
		t.Fatal("restoring the same revision lost state")
	}
}
