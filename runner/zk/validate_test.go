package zk

import (
	"errors"
	"testing"
)

func TestCheckRoot(t *testing.T) {
	for root, ok := range map[string]bool{"/baton": true, "/a/b": true, "/": false, "baton": false, "/baton/": false, "/a//b": false, "/a/..": false} {
		if err := CheckRoot(root); (err == nil) != ok {
			t.Errorf("CheckRoot(%q) = %v, want ok %v", root, err, ok)
		}
	}
	if err := CheckRoot("/"); err == nil || errors.Is(err, ErrNoRoot) {
		t.Errorf("CheckRoot(/) = %v: want a form error, not ErrNoRoot", err)
	}
}
