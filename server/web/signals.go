package web

import (
	"net/url"
	"strconv"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/job"
)

// KeptView is a signal a job keeps for a wait to come, as its page
// lists it: name, ID, when it arrived, and its payload clipped to
// api.ClipBytes as the API clips it (whole when the page asked for it).
type KeptView struct {
	api.KeptSignal
	// FullURL shows the payload whole (the page of the job's kept
	// signals, SignalsView, at the version shown); "" when it is whole.
	FullURL string
}

// KeptOf returns the signals j keeps, oldest first, for the page of job
// id at version v (0: the job now): payloads clipped, but the one whose
// "NAME/ID" is full (at most job.MaxSignalPayload bytes).
func KeptOf(j job.Job, id string, v uint64, full string) []KeptView {
	limit := api.ClipBytes
	if full != "" {
		limit = job.MaxSignalPayload
	}
	sigs := api.SignalsOf(j, limit)
	if sigs == nil || len(sigs.Kept) == 0 {
		return nil
	}
	out := make([]KeptView, len(sigs.Kept))
	for i, k := range sigs.Kept {
		if full != "" && k.Name+"/"+k.ID != full {
			k.Payload, k.Clipped = api.Clip(k.Payload, api.ClipBytes)
		}
		out[i] = KeptView{KeptSignal: k}
		if k.Clipped {
			out[i].FullURL = SignalsURL(id, v, k.Name+"/"+k.ID)
		}
	}
	return out
}

// SignalsURL is the URL of the page of job id's kept signals at version
// v (0: now), with the one whose "NAME/ID" is full ("": none) whole.
func SignalsURL(id string, v uint64, full string) string {
	q := url.Values{}
	if full != "" {
		q.Set("full", full)
	}
	if v > 0 {
		q.Set("version", strconv.FormatUint(v, 10))
	}
	u := "/jobs/" + url.PathEscape(id) + "/signals"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// SignalsView is the page of the signals a job keeps (GET
// /jobs/{id}/signals): the job page's list alone, now or at a past
// version, one payload whole. The job page's script reads it to follow
// its list as signals come and waits take them, and to show a payload
// whole.
type SignalsView struct {
	Page
	ID string
	// Version is the version shown, Latest the newest; Past says a
	// version was asked for.
	Version, Latest uint64
	Past            bool
	// JobURL links the job's page at the version shown.
	JobURL string
	Kept   []KeptView
}

// SignalsViewOf makes the page of the signals j keeps: j is job id at
// version v, latest its newest version, past says v was asked for,
// full names the signal ("NAME/ID") whose payload is shown whole.
func SignalsViewOf(j job.Job, latest uint64, past bool, full string) SignalsView {
	id := string(j.ID())
	v := SignalsView{ID: id, Version: j.Version(), Latest: latest, Past: past}
	at := uint64(0)
	if past {
		at = j.Version()
	}
	v.Title = "Signals kept by job " + id
	v.JobURL = JobURL(id, at, "")
	v.Kept = KeptOf(j, id, at, full)
	return v
}
