package job

import "testing"

// TestPvecGrow: a vector grown to any size keeps its states, reads zero
// in the new slots, takes writes anywhere, and leaves the vector it grew
// from as it was.
func TestPvecGrow(t *testing.T) {
	for _, from := range []int{1, 8, 9, 16, 17, 100, 128, 129, 4096, 5000} {
		for _, to := range []int{from, from + 1, from + 7, 2 * from, 16*from + 3, 70000} {
			if to < from {
				continue
			}
			vals := make([]nstate, from)
			for i := range vals {
				vals[i] = nstate{attempt: uint32(i + 1)}
			}
			v := newPvec(from, vals, nil)
			e := new(edit)
			w := v.grow(e, to)
			for i := range to {
				want := nstate{}
				if i < from {
					want = vals[i]
				}
				if got := w.get(int32(i)); got != want {
					t.Fatalf("%d to %d: slot %d is %+v, want %+v", from, to, i, got, want)
				}
			}
			for i := 0; i < to; i += 1 + to/50 {
				w.ptr(e, int32(i)).pos = int32(i) + 7
			}
			for i := 0; i < to; i += 1 + to/50 {
				if got := w.get(int32(i)).pos; got != int32(i)+7 {
					t.Fatalf("%d to %d: slot %d reads pos %d after a write", from, to, i, got)
				}
			}
			for i := range from {
				if got := v.get(int32(i)); got != vals[i] {
					t.Fatalf("%d to %d: the old vector's slot %d changed to %+v", from, to, i, got)
				}
			}
		}
	}
}
