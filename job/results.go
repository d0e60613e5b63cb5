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
// by Failure, which walks it. An action that is retried appears once per
// failed attempt, and once more when it settles: readers take the newest.

// result is what a settled action reported.
type result struct {
	output []byte
	err    string
	kind   string // a failure's kind
}

type resEntry struct {
	// node is the action; -node-1 is a tombstone, which a loop's next
	// iteration leaves for each node of its body that had a result.
	node int32
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
	// tok is the edit token of the Restart that made the chunk (see
	// engine.token), held here so the two are one allocation. It is only
	// ever compared by address.
	tok edit
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

// resultsByNode returns the newest result of every action that has one
// (a settled action, or one whose failed attempt waits for a retry),
// indexed by node; nil for the other nodes. It is O(tree + results).
func (j *Job) resultsByNode() []*result {
	by := make([]*result, len(j.t.nodes))
	tombs := false
	for c := j.results; c != nil; c = c.prev {
		for i := len(c.entries) - 1; i >= 0; i-- {
			e := &c.entries[i]
			if e.node < 0 {
				// A tombstone: a loop's next iteration reset the node.
				if n := -e.node - 1; by[n] == nil {
					by[n], tombs = &tombstone, true
				}
				continue
			}
			if by[e.node] == nil {
				by[e.node] = &e.res
			}
		}
	}
	if tombs {
		for i, r := range by {
			if r == &tombstone {
				by[i] = nil
			}
		}
	}
	return by
}

// tombstone marks, in resultsByNode, a node whose results a loop reset.
var tombstone result

// resultOf returns the result of the action id, or nil if it has none. It
// is O(results).
func (j *Job) resultOf(id int32) *result {
	for c := j.results; c != nil; c = c.prev {
		for i := len(c.entries) - 1; i >= 0; i-- {
			if n := c.entries[i].node; n == id {
				return &c.entries[i].res
			} else if n == -id-1 {
				return nil // a tombstone: a loop's next iteration reset it
			}
		}
	}
	return nil
}
