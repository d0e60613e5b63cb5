package zk

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/placement"
)

// The node names of the layout (see the package doc). Every name is built
// and read here, nowhere else.

// layout is the set of paths under one root.
type layout struct{ root string }

func (l layout) jobs() string        { return l.root + "/jobs" }
func (l layout) queue() string       { return l.root + "/queue" }
func (l layout) claims() string      { return l.root + "/claims" }
func (l layout) timers() string      { return l.root + "/timers" }
func (l layout) workers() string     { return l.root + "/workers" }
func (l layout) dispatching() string { return l.root + "/dispatching" }

// signals is the parent of the signals sent and not yet applied. It is
// not one of dirs: a root made by an older baton lacks it until a signal
// is sent.
func (l layout) signals() string { return l.root + "/signals" }

// dirs are the persistent parents every runner on the root needs.
func (l layout) dirs() []string {
	return []string{l.root, l.jobs(), l.queue(), l.claims(), l.timers(), l.workers(), l.dispatching()}
}

// job is the node of job id: its meta record.
func (l layout) job(id job.ID) string { return l.jobs() + "/" + string(id) }

// incarnation is the subtree of one incarnation of job id: its snapshots
// and steps. A writer that loaded an earlier incarnation creates nodes
// under a parent that no longer exists, so its write fails as a whole.
func (l layout) incarnation(id job.ID, inc uint64) string {
	return l.job(id) + "/" + incName(inc)
}

func incName(inc uint64) string { return fmt.Sprintf("i-%016x", inc) }

// snapChunk is chunk k of the snapshot of job id at version v; tag tells
// apart snapshots of one version written by two racing writers.
func (l layout) snapChunk(id job.ID, inc, v uint64, tag string, k int) string {
	return fmt.Sprintf("%s/snap-%020d-%s-%04d", l.incarnation(id, inc), v, tag, k)
}

// step is the step record that made version v of job id.
func (l layout) step(id job.ID, inc, v uint64) string {
	return fmt.Sprintf("%s/step-%020d", l.incarnation(id, inc), v)
}

// entryName is the name of the queue entry of action a, queued at
// queuedMs (Unix milliseconds):
// "a-RANK-TIME-ROUTE-NLEN-NAME-LEN-JOB-ACTION". The rank (10000 minus
// the priority, 5 digits) sorts higher priorities first, then the time
// sorts them in the order they were queued: workers sort entry names,
// never read data. ROUTE is the action's route token (routeOf: "-", or a
// key's, a pin's or a replica group's, at most placement.MaxRouteLen
// bytes) and NAME its action name (NLEN bytes long), so that a worker
// decides where the action runs from the name alone (placement.Decide).
// The name ends with the action's key, so an action is queued at most
// once at a time and an operator sees in a listing what waits.
func entryName(a job.Action, queuedMs int64) string {
	return fmt.Sprintf("a-%05d-%013d-%s-%d-%s-%s", rank(actionPriority(a)), queuedMs, routeToken(a), len(a.Name), a.Name, keyName(a.JobID, a.ID))
}

func rank(priority int) int { return 10000 - max(-9999, min(9999, priority)) }

// entryInfo is what a queue entry's name says.
type entryInfo struct {
	rank     int
	queuedMs int64
	// route is the entry's route token, parsed; an entry named by a baton
	// older than routes has none (placement.RouteNone).
	route placement.Route
	// action is the action's name; "" for an entry named by a baton older
	// than routes, whose data says it.
	action   string
	id       job.ID
	actionID string
}

// parseEntry reads a queue entry's name, in either form: the current
// one (entryName) or the older "a-RANK-TIME-LEN-JOB-ACTION", which has no
// route and no action name.
func parseEntry(name string) (e entryInfo, ok bool) {
	rest, ok := strings.CutPrefix(name, "a-")
	if !ok || len(rest) < 5+1+13+1+1 || rest[5] != '-' || rest[19] != '-' {
		return entryInfo{}, false
	}
	r, err1 := strconv.Atoi(rest[:5])
	ms, err2 := strconv.ParseInt(rest[6:19], 10, 64)
	if err1 != nil || err2 != nil {
		return entryInfo{}, false
	}
	e.rank, e.queuedMs = r, ms
	rest = rest[20:]
	if c := rest[0]; c < '0' || c > '9' {
		// ROUTE-NLEN-NAME-: the current form. A route token holds no '-'
		// but the token "-" itself.
		n := 1 // the token "-"
		if c != '-' {
			if n = strings.IndexByte(rest, '-'); n < 0 {
				return entryInfo{}, false
			}
		}
		tok := rest[:n]
		rest = rest[n:]
		if e.route, err1 = placement.ParseRoute(tok); err1 != nil || !strings.HasPrefix(rest, "-") {
			return entryInfo{}, false
		}
		var act job.ID
		if act, rest, ok = splitKeyName(rest[1:]); !ok {
			return entryInfo{}, false
		}
		e.action = string(act)
	}
	e.id, e.actionID, ok = splitKeyName(rest)
	if !ok {
		return entryInfo{}, false
	}
	return e, true
}

// entryKey reads a queue entry's name: its rank and time, the job and the
// action.
func entryKey(name string) (rank int, queuedMs int64, id job.ID, actionID string, ok bool) {
	e, ok := parseEntry(name)
	return e.rank, e.queuedMs, e.id, e.actionID, ok
}

func (l layout) entry(name string) string { return l.queue() + "/" + name }

// claim is the ephemeral owner node of the queue entry named entry.
func (l layout) claim(entry string) string { return l.claims() + "/" + entry }

// keyName is "LEN-JOB-ID": a job ID (which may hold '-') and an action or
// timer ID, unambiguous thanks to the length. Job IDs hold no '/', no
// space, and never are "." or "..".
func keyName(id job.ID, rest string) string {
	return strconv.Itoa(len(id)) + "-" + string(id) + "-" + rest
}

// splitKeyName reads a keyName.
func splitKeyName(name string) (job.ID, string, bool) {
	n, rest, ok := strings.Cut(name, "-")
	if !ok {
		return "", "", false
	}
	k, err := strconv.Atoi(n)
	if err != nil || k <= 0 || k > len(rest) || len(rest) < k+1 || rest[k] != '-' {
		return "", "", false
	}
	return job.ID(rest[:k]), rest[k+1:], true
}

// timer is the node of a timer: its due time (Unix milliseconds, 13
// digits, rounded up so that it never fires early) first, so that the
// timers sort by due time.
func (l layout) timer(t job.Timer) string {
	ms := t.Due.UnixMilli()
	if t.Due.After(time.UnixMilli(ms)) {
		ms++
	}
	return fmt.Sprintf("%s/t-%013d-%s", l.timers(), ms, keyName(t.JobID, t.ID))
}

// timerKey reads a timer node's name.
func timerKey(name string) (dueMilli int64, id job.ID, timerID string, ok bool) {
	rest, ok := strings.CutPrefix(name, "t-")
	if !ok || len(rest) < 15 || rest[13] != '-' {
		return 0, "", "", false
	}
	due, err := strconv.ParseInt(rest[:13], 10, 64)
	if err != nil {
		return 0, "", "", false
	}
	id, timerID, ok = splitKeyName(rest[14:])
	return due, id, timerID, ok
}

// signal is the node of signal s sent to job id: "s-LEN-JOB-HASH", HASH
// the first 128 bits of the SHA-256 of the signal's name and ID (32 hex
// digits): an ID may hold any printable character, '/' too, which a
// node's name may not; and one name and ID make one node, so that a
// signal sent twice before it is applied is one node.
func (l layout) signal(id job.ID, s job.Signal) string {
	sum := sha256.Sum256([]byte(s.Name + "\x00" + s.ID))
	return l.signals() + "/s-" + keyName(id, hex.EncodeToString(sum[:16]))
}

// signalKey reads a signal node's name: the job it was sent to.
func signalKey(name string) (job.ID, bool) {
	rest, ok := strings.CutPrefix(name, "s-")
	if !ok {
		return "", false
	}
	id, hash, ok := splitKeyName(rest)
	if !ok || len(hash) != 32 {
		return "", false
	}
	if _, err := hex.DecodeString(hash); err != nil {
		return "", false
	}
	return id, true
}

// worker is a worker's registration: persistent, its admin state (see
// registration), changed only by a compare-and-swap on its version.
func (l layout) worker(name string) string { return l.workers() + "/" + name }

// live is a worker's ephemeral live node: it exists while a process runs
// under the name (see liveNode).
func (l layout) live(name string) string { return l.worker(name) + "/live" }

// pins is the index of the pins a worker holds: one child per pin, named
// by its ID (pinID).
func (l layout) pins(name string) string { return l.worker(name) + "/pins" }

// pin is one entry of a worker's pins index.
func (l layout) pin(name, id string) string { return l.pins(name) + "/" + id }

// allocs is the parent of the pins' allocations, bucketed by the first
// two hex digits of their IDs so that no parent grows past what zkCli
// lists.
func (l layout) allocs() string { return l.root + "/alloc" }

// alloc is a pin's allocation, named by its ID (16 hex digits): JSON
// {key, worker, job, since}.
func (l layout) alloc(id string) string {
	if len(id) < 2 {
		return l.allocs() + "/" + id
	}
	return l.allocs() + "/" + id[:2] + "/" + id
}

// pinID is the name of a pin's nodes: its key's hash, 16 hex digits.
func pinID(hash uint64) string { return fmt.Sprintf("%016x", hash) }

// placement is the cluster's placement settings: JSON (see settingsNode),
// changed by a compare-and-swap on its version. Absent: the defaults.
func (l layout) placement() string { return l.root + "/placement" }

// quarantines is the parent of the quarantines: one child per action
// name, whose data is a count written with its version in the multi-op
// that creates a quarantine under it.
func (l layout) quarantines() string { return l.root + "/quarantine" }

// quarantineAction is the node of one action name's quarantines.
func (l layout) quarantineAction(action string) string { return l.quarantines() + "/" + action }

// quarantine is the ephemeral node of worker name's quarantine for an
// action name: JSON {until_ms_left, strikes}.
func (l layout) quarantine(action, name string) string {
	return l.quarantineAction(action) + "/" + name
}

// settled is the index of settled jobs, by when they settled: the
// retention sweep reads it (see retention.go). It is not one of dirs: a
// root made by an older baton lacks it until a job settles.
func (l layout) settled() string { return l.root + "/settled" }

// settledBucket is the bucket of the jobs that settled in the minute of
// t (UTC): "m-YYYYMMDDHHMM", names that sort by time.
func (l layout) settledBucket(t time.Time) string {
	return l.settled() + "/" + bucketName(t)
}

func bucketName(t time.Time) string { return "m-" + t.UTC().Format("200601021504") }

// bucketTime reads a bucket's name: the start of its minute.
func bucketTime(name string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(name, "m-")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse("200601021504", rest)
	return t, err == nil
}

// settledEntry is the index node of job id, settled at t (Unix
// milliseconds, 13 digits, first: the bucket's entries sort by time).
// Its data is the job's incarnation (16 hex digits).
func (l layout) settledEntry(t time.Time, id job.ID) string {
	return fmt.Sprintf("%s/%013d-%s", l.settledBucket(t), t.UnixMilli(), keyName(id, "j"))
}

// settledKey reads an index node's name.
func settledKey(name string) (ms int64, id job.ID, ok bool) {
	if len(name) < 15 || name[13] != '-' {
		return 0, "", false
	}
	ms, err := strconv.ParseInt(name[:13], 10, 64)
	if err != nil {
		return 0, "", false
	}
	id, rest, ok := splitKeyName(name[14:])
	return ms, id, ok && rest == "j"
}

// dispatchingJob marks a job whose saved transition had more actions than
// one multi-op holds: its queue entries are being written in parts.
func (l layout) dispatchingJob(id job.ID) string { return l.dispatching() + "/" + string(id) }
