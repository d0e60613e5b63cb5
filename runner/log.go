package runner

import (
	"context"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// What every runner logs about the work it does, written once here so that
// the three runners say it alike (Execute and Engine call these):
//
//   - DEBUG "action claimed": a worker took an action to run (LogClaimed,
//     for the runners that claim actions).
//   - DEBUG "action started" and "action succeeded".
//   - DEBUG "timer armed", for each wait a committed transition arms: a
//     retry of a failed attempt ("seq[1]@retry#2") or a deadline.
//   - WARN "action failed", for every attempt that fails, retried or not,
//     with its kind and its message clipped to one short line.
//   - INFO "job finished", with what made a failed job fail (the node,
//     its action's name, the kind and message of its failure) or the
//     reason of a cancelled one.
//
// Each line names the job ("job"), and each line about an action its ID
// ("action", path#attempt), its attempt ("attempt") and its name ("name").
// Nothing is built for a level the logger does not take: the lines cost
// nothing on a runner logging at INFO, whose actions succeed.

// maxLogText bounds a message in a log line, as job.Failure's String
// bounds it: a failure is a one-line summary, whatever its action said.
const maxLogText = 200

// LogClaimed logs at DEBUG that this process claimed action a to run it;
// attrs say what was claimed where (a queue entry, a partition). A nil log
// logs nothing.
func LogClaimed(ctx context.Context, log *slog.Logger, a job.Action, attrs ...slog.Attr) {
	if log == nil || !log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	log.LogAttrs(ctx, slog.LevelDebug, "action claimed", append(actionAttrs(a), attrs...)...)
}

// logStarted logs at DEBUG that a's handler is called.
func logStarted(ctx context.Context, log *slog.Logger, a job.Action) {
	if log == nil || !log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	log.LogAttrs(ctx, slog.LevelDebug, "action started", actionAttrs(a)...)
}

// logEnded logs a's end: a success at DEBUG, a failure at WARN with its
// kind and message. took is how long the handler ran (0 for none).
func logEnded(ctx context.Context, log *slog.Logger, a job.Action, r job.Result, took time.Duration) {
	lvl := slog.LevelDebug
	if r.Failed() {
		lvl = slog.LevelWarn
	}
	if log == nil || !log.Enabled(ctx, lvl) {
		return
	}
	if !r.Failed() {
		log.LogAttrs(ctx, lvl, "action succeeded", append(actionAttrs(a), slog.Duration("took", took))...)
		return
	}
	attrs := append(actionAttrs(a), slog.String("kind", r.Kind), slog.String("message", clip(r.Error)))
	if r.Final {
		attrs = append(attrs, slog.Bool("final", true))
	}
	log.LogAttrs(ctx, lvl, "action failed", append(attrs, slog.Duration("took", took))...)
}

// logTimers logs at DEBUG each timer a committed transition arms.
func logTimers(ctx context.Context, log *slog.Logger, ts []job.Timer) {
	if len(ts) == 0 || !log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	for _, t := range ts {
		log.LogAttrs(ctx, slog.LevelDebug, "timer armed", slog.String("job", string(t.JobID)), slog.String("timer", t.ID), slog.Time("due", t.Due))
	}
}

// logFinished logs at INFO that job j ended: its status, and for a failed
// job its failure (job.Failure: the node that failed, its action's name
// unless a deadline ran out, the kind, the message clipped, and how many
// more failures the parallel nodes on the way counted), for a cancelled
// job the cancel's reason.
func logFinished(ctx context.Context, log *slog.Logger, j job.Job) {
	if !log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{slog.String("job", string(j.ID())), slog.String("status", j.Status().String()), slog.Uint64("version", j.Version())}
	if f, ok := j.Failure(); ok {
		attrs = append(attrs, slog.String("failed_at", ast.ShowPath(f.Path)))
		if f.Action != "" {
			attrs = append(attrs, slog.String("name", f.Action))
		}
		attrs = append(attrs, slog.String("kind", f.Kind), slog.String("message", clip(f.Message)))
		if f.Others > 0 {
			attrs = append(attrs, slog.Int("more_failures", f.Others))
		}
	} else if why, ok := j.Cancelled(); ok {
		attrs = append(attrs, slog.String("reason", clip(why)))
	}
	log.LogAttrs(ctx, slog.LevelInfo, "job finished", attrs...)
}

func actionAttrs(a job.Action) []slog.Attr {
	attrs := make([]slog.Attr, 4, 8)
	attrs[0] = slog.String("job", string(a.JobID))
	attrs[1] = slog.String("action", a.ID)
	attrs[2] = slog.Int("attempt", a.Attempt)
	attrs[3] = slog.String("name", a.Name)
	return attrs
}

// clip cuts s to at most maxLogText bytes, at a rune boundary, and marks
// the cut. Line breaks are the handler's to quote.
func clip(s string) string {
	if len(s) <= maxLogText {
		return s
	}
	n := maxLogText
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
