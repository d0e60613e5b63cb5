package kafka

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/segmentio/kafka-go"

	"github.com/batonwf/baton/job"
)

// State record headers.
const (
	hdrToken  = "baton-token"  // the claim the record was written under
	hdrChunks = "baton-chunks" // a snapshot chunk: how many chunks the snapshot has
	hdrEpoch  = "baton-epoch"  // a claim: its epoch, "ERA.GENERATION.SEQ"
)

// epoch orders claims: a claim counts only if its epoch is above every
// claim before it in the partition, so a claim written late (a producer's
// retry of an old owner's claim, landing after a newer one) never takes
// the partition back. Gen is the restarter group's generation that
// assigned the partition, which the coordinator only ever raises; Seq
// counts the claims of one owner in one generation (it claims again after
// a failed write); Era is raised when the generation numbers start again
// (the group was deleted and made anew).
type epoch struct {
	era, gen, seq uint64
}

func (e epoch) less(f epoch) bool {
	if e.era != f.era {
		return e.era < f.era
	}
	if e.gen != f.gen {
		return e.gen < f.gen
	}
	return e.seq < f.seq
}

func (e epoch) String() string {
	return strconv.FormatUint(e.era, 10) + "." + strconv.FormatUint(e.gen, 10) + "." + strconv.FormatUint(e.seq, 10)
}

func parseEpoch(s string) (epoch, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return epoch{}, false
	}
	var n [3]uint64
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return epoch{}, false
		}
		n[i] = v
	}
	return epoch{n[0], n[1], n[2]}, true
}

// recKind is what a state record is, read from its key.
type recKind uint8

const (
	recHead recKind = iota + 1
	recStep
	recChunk
	recClaim
)

// stateKey is a state record's key, parsed.
type stateKey struct {
	kind      recKind
	id        job.ID // not for claims
	version   uint64 // steps and chunks
	token     uint64 // steps, chunks and claims
	chunk     int    // chunks
	partition int    // claims
}

func versionDigits(v uint64) string {
	s := strconv.FormatUint(v, 10)
	return strings.Repeat("0", 20-len(s)) + s
}

func headKey(id job.ID) string { return string(id) }

func stepKey(id job.ID, v, token uint64) string {
	return string(id) + "/s/" + versionDigits(v) + "/" + hexInc(token)
}

func chunkKey(id job.ID, v, token uint64, k int) string {
	return string(id) + "/n/" + versionDigits(v) + "/" + hexInc(token) + "/" + strconv.Itoa(k)
}

func claimKey(p int, token uint64) string {
	return "/claim/" + strconv.Itoa(p) + "/" + hexInc(token)
}

// parseStateKey reads a state record's key.
func parseStateKey(key string) (stateKey, error) {
	if rest, ok := strings.CutPrefix(key, "/claim/"); ok {
		p, tok, ok := strings.Cut(rest, "/")
		n, err1 := strconv.Atoi(p)
		t, err2 := parseInc(tok)
		if !ok || err1 != nil || err2 != nil || n < 0 {
			return stateKey{}, fmt.Errorf("malformed claim key %q", key)
		}
		return stateKey{kind: recClaim, partition: n, token: t}, nil
	}
	parts := strings.Split(key, "/")
	id := job.ID(parts[0])
	if err := id.Check(); err != nil {
		return stateKey{}, fmt.Errorf("state key %q: %w", key, err)
	}
	if len(parts) == 1 {
		return stateKey{kind: recHead, id: id}, nil
	}
	bad := func() (stateKey, error) { return stateKey{}, fmt.Errorf("malformed state key %q", key) }
	if len(parts) < 4 || len(parts[2]) != 20 {
		return bad()
	}
	v, err := strconv.ParseUint(parts[2], 10, 64)
	if err != nil || v == 0 {
		return bad()
	}
	tok, err := parseInc(parts[3])
	if err != nil {
		return bad()
	}
	switch {
	case parts[1] == "s" && len(parts) == 4:
		return stateKey{kind: recStep, id: id, version: v, token: tok}, nil
	case parts[1] == "n" && len(parts) == 5:
		k, err := strconv.Atoi(parts[4])
		if err != nil || k < 0 {
			return bad()
		}
		return stateKey{kind: recChunk, id: id, version: v, token: tok, chunk: k}, nil
	}
	return bad()
}

func header(m kafka.Message, key string) (string, bool) {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}

func tokenHeader(token uint64) kafka.Header {
	return kafka.Header{Key: hdrToken, Value: []byte(hexInc(token))}
}
