package render

import (
	"fmt"
	"strings"

	"github.com/batonwf/baton/ast"
	"github.com/batonwf/baton/job"
)

// statusStyle is how a status is coloured in dot and mermaid.
type statusStyle struct{ fill, stroke string }

var statusStyles = map[job.Status]statusStyle{
	job.StatusIdle:      {"#eeeeee", "#999999"},
	job.StatusRunning:   {"#ffe08a", "#b58900"},
	job.StatusSucceeded: {"#b7e4a7", "#2e7d32"},
	job.StatusFailed:    {"#f4a6a6", "#c62828"},
	job.StatusCancelled: {"#d9d9d9", "#757575"},
	// Skipped (a case a choice did not select, a dag child its guard
	// refused: settled, never run) is neutral, as on the job page: a
	// light grey, dotted (idle and cancelled are dashed).
	job.StatusSkipped: {"#f2f2f2", "#8c8c8c"},
}

var allStatuses = []job.Status{job.StatusIdle, job.StatusRunning, job.StatusSucceeded, job.StatusFailed, job.StatusCancelled, job.StatusSkipped}

// graphNode is one node of the tree with its parent, for dot and mermaid.
type graphNode struct {
	job.NodeInfo
	parent int    // Index of the parent; -1 for the root
	edge   string // "body", "rescue" or "finally" under a try; "" otherwise
}

// graphNodes lists j's nodes in pre-order with their parents.
func graphNodes(j job.Job) []graphNode {
	var out []graphNode
	var stack []int // stack[d] is the Index of the last node seen at depth d
	j.Walk(func(n job.NodeInfo) bool {
		g := graphNode{NodeInfo: n, parent: -1}
		stack = append(stack[:n.Depth], n.Index)
		if n.Depth > 0 {
			g.parent = stack[n.Depth-1]
			last := n.Path[strings.LastIndexByte(n.Path, '.')+1:]
			switch last {
			case ast.PartBody, ast.PartRescue, ast.PartFinally:
				g.edge = last
			}
		}
		out = append(out, g)
		return true
	})
	return out
}

// labelLines are the lines of a node's label: kind or action name, path,
// status.
func labelLines(n job.NodeInfo) []string {
	var lines []string
	if n.Kind == ast.KindAct {
		lines = append(lines, n.Action)
	} else {
		lines = append(lines, n.Kind.String())
	}
	if n.Path != "" {
		lines = append(lines, n.Path)
	}
	st := n.Status.String()
	if n.Kind == ast.KindAct && n.Attempt > 1 {
		st += fmt.Sprintf(" #%d", n.Attempt)
	}
	lines = append(lines, st)
	if n.Kind == ast.KindAct && n.Status == job.StatusFailed {
		lines = append(lines, job.Clip(n.Error))
	}
	return lines
}

// Dot renders j as a Graphviz digraph: one node per tree node,
// labelled with its kind or action, path and status and filled by status;
// one edge per parent and child, labelled with the part under a try.
func Dot(j job.Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote("job "+string(j.ID())))
	fmt.Fprintf(&b, "  label=%s;\n  labelloc=t;\n  ordering=out;\n", dotQuote(fmt.Sprintf("job %s v%d: %s", j.ID(), j.Version(), j.Status())))
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n")
	nodes := graphNodes(j)
	for _, n := range nodes {
		s := statusStyles[n.Status]
		style := ""
		switch n.Status {
		case job.StatusCancelled, job.StatusIdle:
			style = `, style="rounded,filled,dashed"`
		case job.StatusSkipped:
			style = `, style="rounded,filled,dotted"`
		}
		fmt.Fprintf(&b, "  n%d [label=%s, fillcolor=%s, color=%s%s];\n",
			n.Index, dotQuote(strings.Join(labelLines(n.NodeInfo), "\n")), dotQuote(s.fill), dotQuote(s.stroke), style)
	}
	for _, n := range nodes {
		if n.parent < 0 {
			continue
		}
		fmt.Fprintf(&b, "  n%d -> n%d", n.parent, n.Index)
		if n.edge != "" {
			fmt.Fprintf(&b, " [label=%s]", dotQuote(n.edge))
		}
		b.WriteString(";\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// dotQuote returns s as a dot string: quoted, with quotes and backslashes
// escaped and newlines as \n.
func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "")
	return `"` + r.Replace(s) + `"`
}

// Mermaid renders j as a mermaid flowchart, the same graph as
// Dot.
func Mermaid(j job.Job) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	nodes := graphNodes(j)
	used := map[job.Status]bool{}
	for _, n := range nodes {
		used[n.Status] = true
		lines := labelLines(n.NodeInfo)
		for i := range lines {
			lines[i] = mermaidEscape(lines[i])
		}
		fmt.Fprintf(&b, "  n%d[\"%s\"]:::%s\n", n.Index, strings.Join(lines, "<br/>"), n.Status)
	}
	for _, n := range nodes {
		if n.parent < 0 {
			continue
		}
		if n.edge != "" {
			fmt.Fprintf(&b, "  n%d -->|%s| n%d\n", n.parent, n.edge, n.Index)
		} else {
			fmt.Fprintf(&b, "  n%d --> n%d\n", n.parent, n.Index)
		}
	}
	for _, st := range allStatuses {
		if used[st] {
			s := statusStyles[st]
			fmt.Fprintf(&b, "  classDef %s fill:%s,stroke:%s\n", st, s.fill, s.stroke)
		}
	}
	return b.String()
}

// mermaidEscape makes s safe inside a quoted mermaid label.
func mermaidEscape(s string) string {
	r := strings.NewReplacer("#", "#35;", `"`, "#34;", "<", "#60;", ">", "#62;", "\n", " ")
	return r.Replace(s)
}
