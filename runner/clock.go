package runner

import "time"

// Clock is the time a runner goes by: it stamps results and job starts
// with Now, and arms the timers of retries and deadlines with AfterFunc,
// for the time left until they are due (due minus Now, at least 0). A
// clock a test moves by hand (runnertest.Clock) makes those timers fall
// due when the test moves it, and only then.
//
// What measures a duration for its own sake (how long an action took, a
// back-off between tries, a connection's timeout, the drain, an action's
// timeout as its context's deadline) uses the real clock: it is not a
// time any job records.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f once d has passed on this clock (at once if
	// d <= 0), unless the Timer is stopped first; never from the
	// goroutine that called AfterFunc, which may hold locks f takes.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a function armed with Clock.AfterFunc.
type Timer interface {
	// Stop keeps the function from being called; it reports whether it
	// did (false: it was called, or stopped, already).
	Stop() bool
}

// RealClock returns the real clock: time.Now and time.AfterFunc.
func RealClock() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
