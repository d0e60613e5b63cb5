package runner

import (
	"context"
	"log/slog"

	"github.com/batonwf/baton/job"
	"github.com/batonwf/baton/store"
)

// RecoverPage is how many jobs RecoverAll lists at a time unless told.
const RecoverPage = 1000

// RecoverAll recovers every unfinished job of st, what a runner does when
// it starts: it lists the unfinished jobs a page of at most page IDs at a
// time (store.List with Unfinished, After and Limit; page 0 or less means
// RecoverPage), and hands each page to recover (Engine.Recover, or a
// runner's wrapper of it), then lists the page after its last ID. Memory
// is bounded by one page however many jobs the store holds, and a
// recovery of N jobs lists the store N/page+1 times (the last page is
// short, or empty).
//
// The errors of recover are logged to log (nil discards), unless ctx
// ended, and the next page is recovered all the same: a job that cannot
// be recovered is left as it is. RecoverAll returns how many jobs it
// handed to recover and the actions recover reports dispatched, and the
// error of a listing, which ends it: one wrapping errors.ErrUnsupported
// if st cannot list (it is no store.Lister), or ctx's.
func RecoverAll(ctx context.Context, st store.Store, page int, recover func(context.Context, ...job.ID) (int, error), log *slog.Logger) (jobs, actions int, err error) {
	if page <= 0 {
		page = RecoverPage
	}
	q := store.Query{Unfinished: true, Limit: page}
	var ids []job.ID
	for {
		if err := ctx.Err(); err != nil {
			return jobs, actions, err
		}
		infos, err := store.List(ctx, st, q)
		if err != nil {
			return jobs, actions, err
		}
		ids = ids[:0]
		for _, in := range infos {
			ids = append(ids, in.ID)
		}
		if len(ids) > 0 {
			n, err := recover(ctx, ids...)
			jobs += len(ids)
			actions += n
			if err != nil && ctx.Err() == nil && log != nil {
				log.Error("resuming jobs", "jobs", len(ids), "err", err)
			}
		}
		if len(infos) < page {
			return jobs, actions, nil
		}
		q.After = infos[len(infos)-1].ID
	}
}
