package job

import "fmt"

// Step is the record of one state change: the results a Restart applied, in
// the order it applied them, and the version they produced. Steps are what
// stores append: a step's size grows with its results, not with the tree.
// Replaying the steps in order on a snapshot rebuilds the job byte for byte.
//
// The step that New produces has Version 1 and no results.
type Step struct {
	Version uint64
	Results []Result // as applied, naming no incarnation (the job's is theirs)
}

// Replay applies steps in order to snapshot and returns the job they
// produce, the same job, byte for byte, that the live Restarts produced.
//
// Steps must follow the snapshot without a gap: the first has version
// snapshot.Version()+1 and each next one the version after. Steps at or
// below the snapshot's version are skipped, so a store may hand over a
// journal that overlaps its newest snapshot. A step that does not apply
// exactly as recorded (a result that is ignored now, a signal dropped by a
// full queue excepted, or another version)
// means the history is corrupt or belongs to another job, and is an error
// naming the step.
func Replay(snapshot Job, steps []Step) (Job, error) {
	if snapshot.t == nil {
		return Job{}, fmt.Errorf("job: Replay of a zero Job")
	}
	j := snapshot
	for i, st := range steps {
		if st.Version <= j.version {
			continue
		}
		if st.Version != j.version+1 {
			return Job{}, fmt.Errorf("job %s: replay step %d has version %d, want %d (a gap in the history)", j.id, i, st.Version, j.version+1)
		}
		if len(st.Results) == 0 {
			return Job{}, fmt.Errorf("job %s: replay step %d (version %d) has no results", j.id, i, st.Version)
		}
		tr, err := Restart(j, st.Results)
		if err != nil {
			return Job{}, fmt.Errorf("job %s: replay step %d (version %d): %w", j.id, i, st.Version, err)
		}
		// A signal dropped by a full queue is in the step (its ID is seen
		// from then on) and ignored alike: it applies as recorded.
		var wrong []Ignored
		for _, g := range tr.Ignored {
			if g.Reason != IgnoredQueueFull {
				wrong = append(wrong, g)
			}
		}
		if len(wrong) > 0 || tr.Job.version != st.Version {
			ig := "none"
			if len(wrong) > 0 {
				ig = wrong[0].String()
			}
			return Job{}, fmt.Errorf("job %s: replay step %d (version %d) does not apply as recorded: %d of %d results ignored (first: %s)",
				j.id, i, st.Version, len(wrong), len(st.Results), ig)
		}
		j = tr.Job
	}
	return j, nil
}
