package tasks

import "time"

// Clock is the time the task machinery reads: the timestamps of task
// records and the timer that stops a running task at its TTL. The zero
// value is the wall clock. Tests set NowFunc and AfterFuncFunc (and give
// the MemoryTaskStore the same now) so that a TTL elapses when the test
// says, never after a sleep.
type Clock struct {
	NowFunc       func() time.Time
	AfterFuncFunc func(d time.Duration, f func()) (stop func() bool)
}

// Now returns the current time of the clock.
func (c Clock) Now() time.Time {
	if c.NowFunc != nil {
		return c.NowFunc()
	}
	return time.Now()
}

// AfterFunc calls f once d has elapsed on the clock, in its own
// goroutine; the returned function stops it, as time.Timer.Stop does.
func (c Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	if c.AfterFuncFunc != nil {
		return c.AfterFuncFunc(d, f)
	}
	return time.AfterFunc(d, f).Stop
}
