package job

// Check exposes the invariant checker to the external tests.
func Check(j Job) error { return j.check() }

// CheckTransition exposes the check Restart makes of its own output.
func CheckTransition(tr Transition) error { return tr.check() }
