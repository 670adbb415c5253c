package server

import "time"

// taskClock is the time the task machinery reads: the timestamps of task
// records and the timer that stops a running task at its TTL. The zero
// value is the wall clock. Tests install a manual clock (and give the
// MemoryTaskStore the same now) so that a TTL elapses when the test says,
// never after a sleep.
type taskClock struct {
	now       func() time.Time
	afterFunc func(d time.Duration, f func()) (stop func() bool)
}

// Now returns the current time of the clock.
func (c taskClock) Now() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// AfterFunc calls f once d has elapsed on the clock, in its own
// goroutine; the returned function stops it, as time.Timer.Stop does.
func (c taskClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	if c.afterFunc != nil {
		return c.afterFunc(d, f)
	}
	return time.AfterFunc(d, f).Stop
}
