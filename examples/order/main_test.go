package main

import "testing"

func TestOrder(t *testing.T) {
	for _, decline := range []bool{false, true} {
		if err := runOrder(decline); err != nil {
			t.Fatalf("decline=%v: %v", decline, err)
		}
	}
}
