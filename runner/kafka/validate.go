package kafka

import "fmt"

// MaxPrefix is the longest Config.Prefix, in bytes: every action topic's
// name, PREFIX.action.NAME, then fits in Kafka's 249 bytes for every
// action name.
const MaxPrefix = maxPrefix

// PrefixError is CheckPrefix's error: what is wrong with a prefix.
type PrefixError struct {
	Prefix string
	// At is the index of the first byte a topic name does not allow, or
	// -1 when the prefix is empty or longer than MaxPrefix.
	At int
}

func (e *PrefixError) Error() string {
	if e.At < 0 {
		return fmt.Sprintf("kafka: prefix %q is %d bytes long (want 1 to %d, so that every action topic name fits in 249)", e.Prefix, len(e.Prefix), MaxPrefix)
	}
	return fmt.Sprintf("kafka: prefix %q has %q at byte %d (allowed: letters, digits, '.', '_', '-')", e.Prefix, e.Prefix[e.At], e.At)
}

// CheckPrefix checks a prefix as Open checks Config.Prefix, without
// connecting: 1 to MaxPrefix bytes, each a letter, a digit, '.', '_' or
// '-'. (Config.Prefix's empty value means the default, "baton"; an empty
// prefix given explicitly is an error here.) The error is a *PrefixError.
// Open checks Config.Prefix with this very function.
func CheckPrefix(p string) error {
	if p == "" || len(p) > maxPrefix {
		return &PrefixError{Prefix: p, At: -1}
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return &PrefixError{Prefix: p, At: i}
		}
	}
	return nil
}

// RestarterTopic is the topic of prefix that new jobs, results and
// cancels go to, for the restarters.
func RestarterTopic(prefix string) string { return (&Config{Prefix: prefix}).restarterTopic() }

// StateTopic is the compacted topic of prefix that holds the jobs: a
// prefix without it has no jobs.
func StateTopic(prefix string) string { return (&Config{Prefix: prefix}).stateTopic() }

// RestarterGroup is the consumer group the restarters of prefix share
// (the package doc names it): a tool counts its members to tell whether
// any restarter runs.
func RestarterGroup(prefix string) string {
	return (&Config{Prefix: prefix}).restarterGroup()
}
