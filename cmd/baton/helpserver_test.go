package main

import (
	"strings"
	"testing"
)

// TestHelpNamesServerCommands: the root help's paragraph on 'baton
// serve' names every command that takes --server, and the commands list
// keeps its column for every name; it left out signal, and 'placement'
// ran into its summary.
func TestHelpNamesServerCommands(t *testing.T) {
	root := baton(t, "--help").want(t, exitOK).stdout
	start := strings.Index(root, "While 'baton serve'")
	end := strings.Index(root, "usage: baton COMMAND")
	if start < 0 || end < start {
		t.Fatalf("no paragraph on 'baton serve' before the usage:\n%s", root)
	}
	para := strings.Join(strings.Fields(root[start:end]), " ")
	for _, cmd := range commands() {
		if !strings.Contains(baton(t, cmd.name, "--help").want(t, exitOK).stdout, "-server URL") {
			continue
		}
		if !strings.Contains(para, " "+cmd.name+",") && !strings.Contains(para, " "+cmd.name+" ") {
			t.Errorf("%s takes --server; the root help's paragraph does not name it:\n%s", cmd.name, para)
		}
	}
	// Exit status 3 covers a server that cannot be reached, as the
	// commands through --server exit (it named ZooKeeper and Kafka only).
	if !strings.Contains(strings.Join(strings.Fields(root), " "), "(or ZooKeeper, Kafka or the --server cannot be reached)") {
		t.Errorf("the root help's exit status 3 does not name the --server:\n%s", root)
	}
	width := len("  ") + maxNameLen() + 1
	for _, cmd := range commands() {
		line := "  " + cmd.name + strings.Repeat(" ", width-2-len(cmd.name)) + cmd.summary + "\n"
		if !strings.Contains(root, line) {
			t.Errorf("the commands list has no line %q:\n%s", line, root)
		}
	}
}

func maxNameLen() int {
	n := 0
	for _, cmd := range commands() {
		n = max(n, len(cmd.name))
	}
	return n
}
