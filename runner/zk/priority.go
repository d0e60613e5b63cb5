package zk

import "github.com/batonwf/baton/job"

// actionPriority is the priority of a's leaf.
func actionPriority(a job.Action) int { return a.Priority }
