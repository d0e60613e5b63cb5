package web

import (
	"html/template"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batonwf/baton/api"
	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// Bounds of the job page.
const (
	// PanelBytes bounds each value (payload, output, error) the details
	// panel shows; the full value (up to api.MaxNodeBytes) is one click
	// away, fetched from the node route.
	PanelBytes = 2048
	// StepsShown bounds the steps listed at once; links page through the
	// rest.
	StepsShown = 100
	// ResultsShown bounds the results a step lists.
	ResultsShown = 20
	// DispatchedShown bounds the dispatched actions a step lists.
	DispatchedShown = 10
)

// JobInput is what a job's page is made of.
type JobInput struct {
	// Summary is the job's at the version shown (with the store's times
	// when that is the latest).
	Summary api.Summary
	// Job is the job at the version shown.
	Job job.Job
	// Latest is the job's newest version.
	Latest uint64
	// Past says a version was asked for (?version=V), even the latest:
	// the page then stays on it and is not live.
	Past bool
	// Steps is the job's history from its creation up to the version
	// shown; nil when the store keeps none.
	Steps   []api.Step
	History bool
	Tree    Tree
	// Node is the path of the selected node; Selected says one is
	// (the root's path is "").
	Node     string
	Selected bool
	// Filter filters the steps; StepsFrom is the first version listed
	// (0: the newest StepsShown up to the version shown).
	Filter    StepFilter
	StepsFrom uint64
	// LazySteps leaves the steps out of the page (they are a third of a
	// big job's page): the list is empty, says which versions it would
	// hold, and links to the page that holds them; the script fills it
	// from the history route once the tree and the timeline are drawn.
	// It applies only to the newest steps unfiltered: a page asked for
	// with StepsFrom or a Filter lists its steps.
	LazySteps bool
	Write     bool
	Session   bool
	// Signal says the page may send signals (a write scope, a runner
	// that sends them); SignalID is the ID its signal form sends, made
	// once per page so that a form posted twice sends one signal.
	Signal   bool
	SignalID string
	// Now ends the attempts still running on a live page's timeline.
	Now time.Time
}

// StepFilter filters the steps: by the status of a result (succeeded or
// failed; "cancel" for the steps that applied a cancel), by action name
// and by text in a result's or a dispatched action's path. A step
// matches when some result matches every filter given.
type StepFilter struct {
	Status, Action, Path string
}

// Active says some filter is given.
func (f StepFilter) Active() bool { return f.Status != "" || f.Action != "" || f.Path != "" }

// JobView is a job's page.
type JobView struct {
	Page
	api.Summary
	// Version is the version shown; Latest the newest.
	Version, Latest uint64
	// Live says the script follows the job: the latest version, not
	// settled.
	Live bool
	Past bool
	// LatestURL links to the job now.
	LatestURL string
	// FailureURL selects the failed node.
	FailureURL string
	Tree       Tree
	// ExpandParam is the tree's opened groups as the URL writes them.
	ExpandParam string
	Panel       *Panel
	// NodeParam is the selected node's path ("" with Selected false).
	NodeParam string
	Selected  bool
	History   bool
	Timeline  Timeline
	// TimelineSVG is the timeline drawn (Timeline.SVG).
	TimelineSVG template.HTML
	Steps       []StepView
	Filter      StepFilter
	// EarlierURL and LaterURL page through the steps ("" at an end).
	EarlierURL, LaterURL string
	StepsFrom, StepsTo   uint64
	// LazySteps says the steps StepsFrom to StepsTo are not in the page
	// (JobInput.LazySteps); StepsURL is the page that lists them.
	LazySteps bool
	StepsURL  string
	// CancelURL is where the cancel form posts.
	CancelURL string
	// CanCancel says the cancel form is shown: a write scope, the job
	// running and shown live.
	CanCancel bool
	// Duration is from creation to the last write, or to now while it
	// runs.
	Duration string
	// Kept are the signals the job keeps at the version shown, oldest
	// first, for waits to come.
	Kept []KeptView
}

// Panel is the details of the selected node.
type Panel struct {
	Path     string
	ShowPath string
	Found    bool
	Node     api.Node
	// Clipped says some value was cut at PanelBytes; FullURL fetches the
	// node in full (JSON).
	Clipped bool
	FullURL string
	// Attempts are the node's attempts from the timeline.
	Attempts []Bar
	// SignalURL is where the signal form of a running wait posts, with
	// Signal its signal's name and SignalID the ID it sends; empty unless
	// the node is a running wait of the job as it is now and the page
	// may send signals (JobInput.Signal).
	SignalURL, Signal, SignalID string
}

// StepView is one step of the history.
type StepView struct {
	api.Step
	ID  string // "step-V"
	URL string // the job at this version
	// Results are the first ResultsShown results; MoreResults counts the
	// rest.
	Results     []ResultView
	MoreResults int
	Dispatched  []string
	MoreDisp    int
	// Took are the signals kept before the step that a wait took in it
	// (api.Step.Taken), each with a link to its wait.
	Took []TakenView
	// Grew are the maps the step started and the loops' next
	// iterations (api.Step.Grew), each with a link to its node.
	Grew []GrowthView
	// MoreGrew counts those past the first DispatchedShown (the maps in
	// the copies of a map start together).
	MoreGrew int
	Current  bool
	// Hidden says the step does not match the filter.
	Hidden bool
}

// ResultView is one result of a step.
type ResultView struct {
	api.Result
	// Status is succeeded or failed (a result of an action), timer,
	// signal (a signal: taken by the wait at Path, or kept), or
	// cancelled (an action's cancelled attempt, or a node's cancel).
	Status string
	// NodeURL links the node: an action's, the node a cancel named, the
	// wait that took a signal; "" for a timer and a signal kept.
	NodeURL string
	// Where is Path as the CLI shows it ("root" for the root).
	Where string
}

// GrowthView is what a step grew: a map's copies, a loop's iteration.
type GrowthView struct {
	api.Growth
	Where, URL string
	// Text says it after the node: "started 3 copies", "began
	// iteration 2".
	Text string
}

// growthView makes the view of g, in the job id at version v.
func growthView(id string, v uint64, g api.Growth) GrowthView {
	gv := GrowthView{Growth: g, Where: ast.ShowPath(g.Path), URL: JobNodeURL(id, v, g.Path)}
	switch {
	case g.Kind == ast.KindMap.String() && g.Copies == 1:
		gv.Text = "started 1 copy"
	case g.Kind == ast.KindMap.String():
		gv.Text = "started " + strconv.Itoa(g.Copies) + " copies"
	default:
		gv.Text = "began iteration " + strconv.Itoa(g.Iteration)
	}
	return gv
}

// TakenView is a signal kept earlier that a wait took in a step.
type TakenView struct {
	api.TakenSignal
	Where, URL string
}

// JobViewOf makes a job's page.
func JobViewOf(in JobInput) JobView {
	id := in.Summary.ID
	v := JobView{Summary: in.Summary, Version: in.Summary.Version, Latest: in.Latest, Past: in.Past,
		Tree: in.Tree, ExpandParam: ExpandParam(in.Tree.Expand), Selected: in.Selected, Filter: in.Filter, History: in.History}
	v.Title = "Job " + id
	v.Write, v.Session = in.Write, in.Session
	settled := in.Job.Done()
	v.Live = !in.Past && !settled
	v.CanCancel = v.Live && in.Write
	if _, ok := in.Job.Cancelled(); ok {
		v.CanCancel = false
	}
	v.LatestURL = JobURL(id, 0, "")
	v.CancelURL = "/jobs/" + url.PathEscape(id) + "/cancel"
	for i, g := range v.Tree.Groups {
		g.URL = PageURL(id, pastVersion(in), in.Node, in.Selected, append(slices.Clone(in.Tree.Expand), g.Path))
		v.Tree.Groups[i] = g
	}
	if in.Summary.Failure != nil {
		v.FailureURL = JobNodeURL(id, pastVersion(in), in.Summary.Failure.Path)
	}
	if in.Summary.Created != nil {
		switch {
		case v.Live:
			v.Duration = Duration(in.Now.Sub(*in.Summary.Created))
		case in.Summary.Updated != nil:
			v.Duration = Duration(in.Summary.Updated.Sub(*in.Summary.Created))
		}
	}
	end := in.Now
	if !v.Live && len(in.Steps) > 0 && in.Steps[len(in.Steps)-1].Time != nil {
		end = *in.Steps[len(in.Steps)-1].Time
	}
	v.Timeline = TimelineOf(in.Steps, end)
	v.TimelineSVG = v.Timeline.SVG("timeline-title")
	if in.Selected {
		v.Tree = v.Tree.Select(in.Node)
		v.NodeParam = in.Node
		v.Panel = panelOf(in, v.Timeline)
	}
	v.Kept = KeptOf(in.Job, id, pastVersion(in), "")
	v.steps(in)
	return v
}

// PageURL is a job page's URL at version v (0: now), with the node at
// path selected (if selected) and the groups at expand opened.
func PageURL(id string, v uint64, node string, selected bool, expand []string) string {
	q := url.Values{}
	if v > 0 {
		q.Set("version", strconv.FormatUint(v, 10))
	}
	if selected {
		q.Set("node", node)
	}
	if len(expand) > 0 {
		e := slices.Clone(expand)
		slices.Sort(e)
		q.Set("expand", ExpandParam(slices.Compact(e)))
	}
	u := "/jobs/" + url.PathEscape(id)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// pastVersion is the version links keep: the one shown when the page
// stays on a past version, else 0 (now).
func pastVersion(in JobInput) uint64 {
	if in.Past {
		return in.Summary.Version
	}
	return 0
}

func panelOf(in JobInput, tl Timeline) *Panel {
	p := &Panel{Path: in.Node, ShowPath: ast.ShowPath(in.Node)}
	in.Job.Walk(func(n job.NodeInfo) bool {
		if n.Path == in.Node {
			p.Found = true
			p.Node = api.NodeOf(n, PanelBytes)
			return false
		}
		return true
	})
	if !p.Found {
		return p
	}
	p.Clipped = p.Node.Clipped
	q := url.Values{"path": {in.Node}}
	if in.Past {
		q.Set("version", strconv.FormatUint(in.Summary.Version, 10))
	}
	p.FullURL = "/api/v1/jobs/" + url.PathEscape(in.Summary.ID) + "/node?" + q.Encode()
	for _, b := range tl.Bars {
		if b.Path == in.Node {
			p.Attempts = append(p.Attempts, b)
		}
	}
	if in.Signal && !in.Past && !in.Job.Done() && p.Node.Kind == ast.KindWait.String() && p.Node.Status == job.StatusRunning.String() {
		ast.Walk(in.Job.Workflow(), func(path string, n *ast.Node) bool {
			if path == in.Node && n.Kind == ast.KindWait {
				p.Signal = n.Signal
			}
			return p.Signal == ""
		})
		if p.Signal != "" {
			p.SignalURL = "/jobs/" + url.PathEscape(in.Summary.ID) + "/signals/" + url.PathEscape(p.Signal)
			p.SignalID = in.SignalID
		}
	}
	return p
}

// steps fills the steps listed: StepsShown of them from StepsFrom, or
// the newest up to the version shown.
func (v *JobView) steps(in JobInput) {
	steps := in.Steps
	if len(steps) == 0 {
		return
	}
	first := steps[0].Version
	lo := 0
	if in.StepsFrom > first {
		lo = int(in.StepsFrom - first)
		if lo >= len(steps) {
			lo = len(steps) - 1
		}
	} else if in.StepsFrom == 0 && len(steps) > StepsShown {
		lo = len(steps) - StepsShown
	}
	hi := min(lo+StepsShown, len(steps))
	page := func(from uint64) string {
		u := PageURL(in.Summary.ID, pastVersion(in), in.Node, in.Selected, in.Tree.Expand)
		q := url.Values{"steps_from": {strconv.FormatUint(from, 10)}}
		for k, v := range map[string]string{"steps_status": in.Filter.Status, "steps_action": in.Filter.Action, "steps_path": in.Filter.Path} {
			if v != "" {
				q.Set(k, v)
			}
		}
		if strings.Contains(u, "?") {
			return u + "&" + q.Encode() + "#steps"
		}
		return u + "?" + q.Encode() + "#steps"
	}
	if lo > 0 {
		v.EarlierURL = page(steps[max(0, lo-StepsShown)].Version)
	}
	if hi < len(steps) {
		v.LaterURL = page(steps[hi].Version)
	}
	v.StepsFrom, v.StepsTo = steps[lo].Version, steps[hi-1].Version
	if in.LazySteps && in.StepsFrom == 0 && !in.Filter.Active() {
		v.LazySteps = true
		v.StepsURL = page(v.StepsFrom)
		return
	}
	for _, st := range steps[lo:hi] {
		sv := StepView{Step: st, ID: "step-" + strconv.FormatUint(st.Version, 10), URL: JobURL(in.Summary.ID, st.Version, ""), Current: st.Version == in.Summary.Version}
		for i, r := range st.Results {
			if i == ResultsShown {
				sv.MoreResults = len(st.Results) - i
				break
			}
			rv := ResultView{Result: r, Status: resultStatus(r), Where: ast.ShowPath(r.Path)}
			if !r.Timer && (r.Signal == nil || r.Signal.Taken) {
				rv.NodeURL = JobNodeURL(in.Summary.ID, st.Version, r.Path)
			}
			sv.Results = append(sv.Results, rv)
		}
		for i, g := range st.Grew {
			if i == DispatchedShown {
				sv.MoreGrew = len(st.Grew) - i
				break
			}
			sv.Grew = append(sv.Grew, growthView(in.Summary.ID, st.Version, g))
		}
		for _, tk := range st.Taken {
			sv.Took = append(sv.Took, TakenView{TakenSignal: tk, Where: ast.ShowPath(tk.Path), URL: JobNodeURL(in.Summary.ID, st.Version, tk.Path)})
		}
		for i, d := range st.Dispatched {
			if i == DispatchedShown {
				sv.MoreDisp = len(st.Dispatched) - i
				break
			}
			sv.Dispatched = append(sv.Dispatched, d)
		}
		sv.Hidden = in.Filter.Active() && !in.Filter.matches(st)
		v.Steps = append(v.Steps, sv)
	}
}

// resultStatus is the word a step's result shows: what became of an
// action's attempt, timer, signal, or cancelled for a node's cancel.
func resultStatus(r api.Result) string {
	switch {
	case r.Timer:
		return "timer"
	case r.Signal != nil:
		return "signal"
	case r.NodeCancel != nil, r.Kind == job.KindCancelled:
		return "cancelled"
	case !r.OK:
		return "failed"
	}
	return "succeeded"
}

// matches says whether st matches f.
func (f StepFilter) matches(st api.Step) bool {
	if f.Status == "cancel" {
		return st.Cancel != nil
	}
	for _, r := range st.Results {
		if r.Timer || r.Signal != nil {
			continue
		}
		status := "succeeded"
		if !r.OK {
			status = "failed"
		}
		if (f.Status == "" || f.Status == status) && (f.Action == "" || strings.Contains(r.Action, f.Action)) &&
			(f.Path == "" || strings.Contains(ast.ShowPath(r.Path), f.Path) || strings.Contains(r.Path, f.Path)) {
			return true
		}
	}
	if f.Status == "" && f.Action == "" && f.Path != "" {
		return slices.ContainsFunc(st.Dispatched, func(id string) bool { return strings.Contains(id, f.Path) })
	}
	return false
}
