package kafka

import (
	"errors"
	"strings"
	"testing"
)

// CheckPrefix is the rule Config's own check applies, with the byte at
// fault named.
func TestCheckPrefix(t *testing.T) {
	long := strings.Repeat("p", MaxPrefix)
	for p, at := range map[string]int{"baton": 0, "a.b_c-D9": 0, long: 0, "": -1, long + "p": -1, "a/b": 1, "x y": 1, "é": 0} {
		err := CheckPrefix(p)
		if at == 0 && p != "é" {
			if err != nil || checkPrefix(p) != nil {
				t.Errorf("CheckPrefix(%q) = %v, checkPrefix = %v; want both nil", p, err, checkPrefix(p))
			}
			continue
		}
		var pe *PrefixError
		if !errors.As(err, &pe) || pe.At != at {
			t.Errorf("CheckPrefix(%q) = %#v, want a *PrefixError at %d", p, err, at)
		}
		if p != "" && checkPrefix(p) == nil {
			t.Errorf("checkPrefix(%q) = nil, CheckPrefix refuses it", p)
		}
	}
	if RestarterTopic("p") != "p.restarter" || StateTopic("p") != "p.state" {
		t.Errorf("RestarterTopic(p) = %q, StateTopic(p) = %q", RestarterTopic("p"), StateTopic("p"))
	}
	if g := RestarterGroup("p"); g != (&Config{Prefix: "p"}).restarterGroup() || g != "p.restarters" {
		t.Errorf("RestarterGroup(p) = %q", g)
	}
}
