package job_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonwf/baton/job"
	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// stepGolden is a step record as every store writes it. The file
// testdata/golden/step-f1.hex holds its bytes; a store written by an
// earlier baton holds records like it, so the bytes may never change for
// format 1.
var stepGolden = job.Step{Version: 7, Results: []job.Result{
	{JobID: "order-7", ActionID: "par[0].seq[1]#1", Output: []byte(`{"ok":true}`)},
	{JobID: "order-7", ActionID: "par[2]#3", Error: "card declined: ünsupported"},
	{JobID: "order-7", ActionID: "root#1"},
}}

// stepGolden2 is a step record of format 2: kinds, a final failure and
// times, as retries write them. testdata/golden/step-f2.hex holds it.
var stepGolden2 = job.Step{Version: 9, Results: []job.Result{
	{JobID: "order-7", ActionID: "par[0]#2", Error: "502 from the bank", Kind: "timeout", At: time.Date(2026, 11, 25, 3, 0, 0, 500, time.UTC)},
	{JobID: "order-7", ActionID: "par[1]#1", Error: "card declined", Kind: "card_declined", Final: true},
	{JobID: "order-7", ActionID: "par[2]@retry#3", At: time.Date(2026, 11, 25, 3, 0, 2, 0, time.UTC)},
}}

// stepGolden3 is a step record of format 3: the workers that made the
// results beside kinds and times, as runners write them since results
// name their worker. testdata/golden/step-f3.hex holds it. A result no
// worker made (a timer's firing) has no name in a record of format 3.
var stepGolden3 = job.Step{Version: 4, Results: []job.Result{
	{JobID: "order-7", ActionID: "par[0]#1", Output: []byte(`"ok"`), At: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC), Worker: "host-a-4242-0f3c"},
	{JobID: "order-7", ActionID: "par[1]#2", Error: "502 from the bank", Kind: "timeout", At: time.Date(2026, 11, 26, 8, 0, 1, 0, time.UTC), Worker: "w2"},
	{JobID: "order-7", ActionID: "par[2]@retry#3", At: time.Date(2026, 11, 26, 8, 0, 2, 0, time.UTC)},
}}

func TestStepGolden3(t *testing.T) {
	file := filepath.Join(goldenDir, "step-f3.hex")
	rec := job.EncodeStep(stepGolden3)
	if *goldenUpdate {
		if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(file, []byte(hex.EncodeToString(rec)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./job -run TestStepGolden3 -update-golden once)", err)
	}
	want, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec, want) || rec[0] != 3 {
		t.Errorf("EncodeStep writes other bytes than the golden format-3 record:\n got %x\nwant %x", rec, want)
	}
	got, err := job.DecodeStep("order-7", 4, want)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stepGolden3, got); diff != "" {
		t.Errorf("DecodeStep of the golden record (-want +got):\n%s", diff)
	}
}

// TestStepWorkerOnlyWhenNamed: a step whose results name no worker is
// written in the format it had before results named one, so stores
// written by this baton and an older one hold the same bytes for it; one
// naming a worker is format 3 and keeps the name.
func TestStepWorkerOnlyWhenNamed(t *testing.T) {
	for _, st := range []job.Step{stepGolden, stepGolden2} {
		if got := job.EncodeStep(st)[0]; got == 3 {
			t.Errorf("a step naming no worker is written in format 3")
		}
	}
	named := job.Step{Version: 2, Results: []job.Result{{JobID: "j", ActionID: "root#1", Worker: "w1"}}}
	rec := job.EncodeStep(named)
	if rec[0] != 3 {
		t.Fatalf("a step naming a worker is written in format %d, want 3", rec[0])
	}
	got, err := job.DecodeStep("j", 2, rec)
	if err != nil {
		t.Fatal(err)
	}
	if got.Results[0].Worker != "w1" {
		t.Errorf("the worker read back is %q, want w1", got.Results[0].Worker)
	}
}

func TestStepGolden2(t *testing.T) {
	file := filepath.Join(goldenDir, "step-f2.hex")
	rec := job.EncodeStep(stepGolden2)
	if *goldenUpdate {
		if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(file, []byte(hex.EncodeToString(rec)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./job -run TestStepGolden2 -update-golden once)", err)
	}
	want, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec, want) || rec[0] != 2 {
		t.Errorf("EncodeStep writes other bytes than the golden format-2 record:\n got %x\nwant %x", rec, want)
	}
	got, err := job.DecodeStep("order-7", 9, want)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stepGolden2, got); diff != "" {
		t.Errorf("DecodeStep of the golden record (-want +got):\n%s", diff)
	}
}

func TestStepGolden(t *testing.T) {
	file := filepath.Join(goldenDir, "step-f1.hex")
	rec := job.EncodeStep(stepGolden)
	if *goldenUpdate {
		if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(file, []byte(hex.EncodeToString(rec)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./job -run TestStepGolden -update-golden once)", err)
	}
	want, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rec, want) {
		t.Errorf("EncodeStep writes other bytes than the golden record:\n got %x\nwant %x", rec, want)
	}
	got, err := job.DecodeStep("order-7", 7, want)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stepGolden, got); diff != "" {
		t.Errorf("DecodeStep of the golden record (-want +got):\n%s", diff)
	}
}

// TestStepRoundTrip: DecodeStep(EncodeStep(s)) is s, for any results.
func TestStepRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 5).Draw(t, "n")
		st := job.Step{Version: rapid.Uint64Min(2).Draw(t, "version")}
		for range n {
			r := job.Result{JobID: "j", ActionID: rapid.String().Draw(t, "id"), Error: rapid.String().Draw(t, "err")}
			if out := rapid.SliceOf(rapid.Byte()).Draw(t, "out"); len(out) > 0 {
				r.Output = out
			}
			if rapid.Bool().Draw(t, "timed") {
				r.Kind = rapid.String().Draw(t, "kind")
				r.Final = rapid.Bool().Draw(t, "final")
				if at := rapid.Int64().Draw(t, "at"); at != 0 {
					r.At = time.Unix(0, at).UTC()
				}
			}
			if rapid.Bool().Draw(t, "named") {
				r.Worker = rapid.String().Draw(t, "worker")
			}
			st.Results = append(st.Results, r)
		}
		rec := job.EncodeStep(st)
		got, err := job.DecodeStep("j", st.Version, rec)
		if err != nil {
			t.Fatalf("DecodeStep: %v", err)
		}
		if diff := cmp.Diff(st, got); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
		// The results do not share memory with the record.
		for i := range rec {
			rec[i] ^= 0xff
		}
		if diff := cmp.Diff(st, got); diff != "" {
			t.Fatalf("the decoded step changed with the record:\n%s", diff)
		}
	})
}

// TestStepCorrupt: every damaged record is an error wrapping ErrCorrupt
// that says what is wrong; none is read back as another step.
func TestStepCorrupt(t *testing.T) {
	rec := job.EncodeStep(stepGolden)
	tests := []struct {
		name string
		rec  []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"format", append([]byte{9}, rec[1:]...), "record format 9"},
		{"truncated", rec[:len(rec)-1], "checksum mismatch"},
		{"no results", job.EncodeStep(job.Step{Version: 2}), "bad result count"},
	}
	for i := 1; i < len(rec); i++ {
		flipped := bytes.Clone(rec)
		flipped[i] ^= 0x10
		tests = append(tests, struct {
			name string
			rec  []byte
			want string
		}{"flipped byte", flipped, "checksum mismatch"})
	}
	for _, tc := range tests {
		_, err := job.DecodeStep("order-7", 7, tc.rec)
		if !errors.Is(err, job.ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error wrapping ErrCorrupt containing %q", tc.name, err, tc.want)
		}
	}
}

// FuzzDecodeStep: arbitrary bytes never panic, and what decodes survives
// another encoding unchanged.
func FuzzDecodeStep(f *testing.F) {
	f.Add(job.EncodeStep(stepGolden))
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, rec []byte) {
		st, err := job.DecodeStep("j", 2, rec)
		if err != nil {
			if !errors.Is(err, job.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := job.DecodeStep("j", 2, job.EncodeStep(st))
		if err != nil {
			t.Fatalf("re-encoded step does not decode: %v", err)
		}
		if diff := cmp.Diff(st, again); diff != "" {
			t.Fatalf("step changed over encoding (-first +again):\n%s", diff)
		}
	})
}
