package kafka

import (
	"errors"
	"strings"
	"testing"
)

// CheckPrefix names the byte at fault.
func TestCheckPrefix(t *testing.T) {
	long := strings.Repeat("p", MaxPrefix)
	for p, at := range map[string]int{"baton": 0, "a.b_c-D9": 0, long: 0, "": -1, long + "p": -1, "a/b": 1, "x y": 1, "é": 0} {
		err := CheckPrefix(p)
		if at == 0 && p != "é" {
			if err != nil {
				t.Errorf("CheckPrefix(%q) = %v, want nil", p, err)
			}
			continue
		}
		var pe *PrefixError
		if !errors.As(err, &pe) || pe.At != at {
			t.Errorf("CheckPrefix(%q) = %#v, want a *PrefixError at %d", p, err, at)
		}
	}
	if RestarterTopic("p") != "p.restarter" || StateTopic("p") != "p.state" {
		t.Errorf("RestarterTopic(p) = %q, StateTopic(p) = %q", RestarterTopic("p"), StateTopic("p"))
	}
	if g := RestarterGroup("p"); g != (&Config{Prefix: "p"}).restarterGroup() || g != "p.restarters" {
		t.Errorf("RestarterGroup(p) = %q", g)
	}
}

// Config's check is CheckPrefix itself: Open refuses a bad prefix with
// the same *PrefixError the CLI gets, naming the byte at fault.
func TestConfigChecksPrefixWithCheckPrefix(t *testing.T) {
	for p, at := range map[string]int{"a/b": 1, "x y": 1, strings.Repeat("p", MaxPrefix+1): -1} {
		c := Config{Brokers: []string{"127.0.0.1:1"}, Prefix: p}
		err := c.fill()
		var pe *PrefixError
		if !errors.As(err, &pe) || pe.At != at || pe.Prefix != p {
			t.Errorf("Config{Prefix: %q}.fill() = %v, want a *PrefixError at %d", p, err, at)
		}
	}
	c := Config{Brokers: []string{"127.0.0.1:1"}}
	if err := c.fill(); err != nil || c.Prefix != "baton" {
		t.Errorf("Config{}.fill() = %v with prefix %q, want nil and the default \"baton\"", err, c.Prefix)
	}
}
