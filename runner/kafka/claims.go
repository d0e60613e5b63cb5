package kafka

import "slices"

// claimLog is what a reader of a state partition keeps of its claims, to
// tell which ones a new owner may delete: every claim it writes
// supersedes the earlier ones, but a record counts only if its token is
// that of the claim that counts at its place in the partition, so a claim
// stays needed while records depend on it.
//
// A claim C that counted, and whose range (the records after it, up to
// the next claim that counts) holds no record with C's token nor with the
// token of the claim kept before it, decides nothing: without it, its
// range falls to the claim before, and every record there is fenced all
// the same. Neither does a claim that never counted (a late copy,
// outranked), once the claims around it are gone. Deleting those, as each
// new owner does, bounds the live claims by the partition's eras that
// wrote records still in it, instead of the restarters' starts. (A late
// copy of a claim that is kept is not deleted: its tombstone would delete
// the claim too.)
type claimLog struct {
	ranges  []claimRange    // the claims that counted, in the partition's order
	outrank map[string]bool // keys of claims that did not count
}

// claimRange is a claim that counted, and the tokens of the records of its
// range.
type claimRange struct {
	key    string
	token  uint64
	tokens map[uint64]bool
}

// counted records a claim that counts from here on.
func (c *claimLog) counted(key string, token uint64) {
	c.ranges = append(c.ranges, claimRange{key: key, token: token, tokens: map[uint64]bool{}})
}

// outranked records a claim read that did not count.
func (c *claimLog) outranked(key string) {
	if c.outrank == nil {
		c.outrank = map[string]bool{}
	}
	c.outrank[key] = true
}

// record records the token of a record that is not a claim.
func (c *claimLog) record(token uint64) {
	if n := len(c.ranges); n > 0 {
		c.ranges[n-1].tokens[token] = true
	}
}

// deleted records a claim's tombstone: the claim is gone, as it will be
// once compaction runs (its range joins the one before). The claim that
// counts now is not forgotten: it still fences what follows.
func (c *claimLog) deleted(key string) {
	delete(c.outrank, key)
	i := slices.IndexFunc(c.ranges, func(r claimRange) bool { return r.key == key })
	if i < 0 || i == len(c.ranges)-1 {
		return
	}
	if i > 0 {
		for t := range c.ranges[i].tokens {
			c.ranges[i-1].tokens[t] = true
		}
	}
	c.ranges = slices.Delete(c.ranges, i, i+1)
}

// superseded returns the keys of the claims that decide nothing (see
// claimLog), the one that counts now excepted.
func (c *claimLog) superseded() []string {
	var out []string
	kept := map[string]bool{}
	var prev uint64 // the token of the claim kept before; 0: none
	for i, r := range c.ranges {
		if i < len(c.ranges)-1 && !r.tokens[r.token] && (prev == 0 || !r.tokens[prev]) {
			out = append(out, r.key)
			continue
		}
		kept[r.key] = true
		prev = r.token
	}
	for k := range c.outrank {
		if !kept[k] && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
