package zk

import (
	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
)

// routeOf is where action a should run, as its queue entry's name says it
// (placement.Route): its pin, its soft key (with the key's wait; 0 means
// the cluster's default, Settings.Wait, which the deciding worker reads
// from its registry), its replica group (the job and the race's path),
// or anywhere. A replica copy under a soft key routes by its group: the
// copies are to land on distinct workers, which the key would defeat
// (replicas under a pin are refused by the language).
func routeOf(a job.Action) placement.Route {
	p := a.Placement
	switch {
	case p != nil && p.Strict:
		return placement.Route{Kind: placement.RoutePin, Key: placement.KeyHash(p.Key)}
	case a.Replica != nil:
		return placement.Route{Kind: placement.RouteGroup, Key: groupKey(a.JobID, a.Replica.Race)}
	case p != nil:
		return placement.Route{Kind: placement.RouteSoft, Key: placement.KeyHash(p.Key), Wait: min(max(p.Wait, 0), placement.MaxWait)}
	}
	return placement.Route{}
}

// groupKey is the key of the replica group of job id's race at path
// race.
func groupKey(id job.ID, race string) uint64 {
	return placement.KeyHash(string(id) + "/race:" + race)
}

// routeToken is routeOf(a) as its queue entry's name holds it.
func routeToken(a job.Action) string {
	tok, err := routeOf(a).Token()
	if err != nil {
		return "-" // unreachable: routeOf clamps the wait
	}
	return tok
}
