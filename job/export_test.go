package job

// Check exposes the invariant checker to the external tests.
func Check(j Job) error { return j.check() }
