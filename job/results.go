package job

// The results applied to a job are kept out of the state trie, in a chain
// of chunks: each Restart that applies results adds one chunk, linked to the
// chunks of the versions before it, and never changes a chunk once Restart
// has returned. Versions of a job share their common chain, as they share
// their trie. Keeping results out of nstate keeps the trie's leaves free of
// pointers, so a step copies them with a plain memmove and the garbage
// collector never scans them.
//
// Results are read only by operations that are O(tree) anyway (Encode,
// Walk, Describe, check), which index the chain once with resultsByNode, and
// by Failure, which walks it. An action settles once, so it appears at most
// once in a chain.

// result is what a settled action reported.
type result struct {
	output []byte
	err    string
}

type resEntry struct {
	node int32 // the action
	res  result
}

// resChunk holds the results of one Restart, in the order applied, or,
// after Decode, every result of the decoded job.
type resChunk struct {
	prev    *resChunk // the chunks of earlier versions, or nil
	entries []resEntry
	// Room for the single result of most Restarts, so that recording it
	// costs one allocation.
	one [1]resEntry
}

// newResChunk returns an empty chunk linked to prev, with room for n
// results.
func newResChunk(prev *resChunk, n int) *resChunk {
	c := &resChunk{prev: prev}
	if n <= len(c.one) {
		c.entries = c.one[:0]
	} else {
		c.entries = make([]resEntry, 0, n)
	}
	return c
}

// resultsByNode returns the result of every settled action, indexed by
// node; nil for the other nodes. It is O(tree + results).
func (j *Job) resultsByNode() []*result {
	by := make([]*result, len(j.t.nodes))
	for c := j.results; c != nil; c = c.prev {
		for i := range c.entries {
			e := &c.entries[i]
			by[e.node] = &e.res
		}
	}
	return by
}

// resultOf returns the result of the action id, or nil if it has none. It
// is O(results).
func (j *Job) resultOf(id int32) *result {
	for c := j.results; c != nil; c = c.prev {
		for i := range c.entries {
			if c.entries[i].node == id {
				return &c.entries[i].res
			}
		}
	}
	return nil
}
