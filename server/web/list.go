package web

import (
	"net/url"
	"strconv"
	"time"

	"github.com/batonwf/baton/api"
)

// ListStatuses are the statuses the list counts and filters by, in the
// order it shows them.
var ListStatuses = []string{"running", "succeeded", "failed", "cancelled", api.StatusDamaged}

// ListView is the job list: one page of jobs and the counts per status.
type ListView struct {
	Page
	// Status and Prefix are the filters in force ("" for none).
	Status, Prefix string
	// After is the cursor this page starts after ("" for the first).
	After string
	Rows  []JobRow
	// Counts are the jobs per status (all of them when Total counts all);
	// each links to the list filtered by it.
	Counts []StatusCount
	// Total counts the jobs counted; CountsCapped says the counting
	// stopped there, so the counts are lower bounds.
	Total        int
	CountsCapped bool
	// NextURL is the link to the next page; "" on the last.
	NextURL string
	// FirstURL is the link to the first page; "" on the first.
	FirstURL string
	// Listed is false when the store cannot list jobs.
	Listed bool
}

// JobRow is one job of the list.
type JobRow struct {
	api.Summary
	URL string
	// Duration is from creation to the last write for a settled job, to
	// now for a running one (Running set: the script ticks it from
	// Created).
	Duration string
	Running  bool
}

// StatusCount is how many jobs have one status.
type StatusCount struct {
	Status  string
	N       int
	URL     string
	Current bool
}

// ListViewOf makes the list's view: the page's summaries (next is the
// listing's cursor, "" on its last page), the counts per status (capped
// says they stopped short of every job), the filters and the time now.
func ListViewOf(jobs []api.Summary, next string, counts map[string]int, capped bool, status, prefix, after string, now time.Time) ListView {
	v := ListView{Status: status, Prefix: prefix, After: after, CountsCapped: capped, Listed: true}
	v.Title = "Jobs"
	for _, sm := range jobs {
		row := JobRow{Summary: sm, URL: JobURL(sm.ID, 0, "")}
		switch {
		case sm.Created == nil:
		case sm.Status == "running":
			row.Running = true
			row.Duration = Duration(now.Sub(*sm.Created))
		case sm.Updated != nil:
			row.Duration = Duration(sm.Updated.Sub(*sm.Created))
		}
		v.Rows = append(v.Rows, row)
	}
	for _, st := range ListStatuses {
		n := counts[st]
		v.Total += n
		v.Counts = append(v.Counts, StatusCount{Status: st, N: n, URL: ListURL(st, prefix, ""), Current: st == status})
	}
	if next != "" {
		v.NextURL = ListURL(status, prefix, next)
	}
	if after != "" {
		v.FirstURL = ListURL(status, prefix, "")
	}
	return v
}

// ListURL is the list's URL with its filters and cursor.
func ListURL(status, prefix, after string) string {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	if after != "" {
		q.Set("after", after)
	}
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}

// JobURL is a job page's URL: at version v (0: now), with node selected
// ("" for none; the root's path is "" too, so it cannot be selected by
// this link: use JobNodeURL).
func JobURL(id string, v uint64, node string) string {
	u := "/jobs/" + url.PathEscape(id)
	q := url.Values{}
	if v > 0 {
		q.Set("version", strconv.FormatUint(v, 10))
	}
	if node != "" {
		q.Set("node", node)
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// JobNodeURL is a job page's URL with the node at path selected (the
// root too), at version v (0: now).
func JobNodeURL(id string, v uint64, path string) string {
	q := url.Values{}
	if v > 0 {
		q.Set("version", strconv.FormatUint(v, 10))
	}
	q.Set("node", path)
	return "/jobs/" + url.PathEscape(id) + "?" + q.Encode()
}
