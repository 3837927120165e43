package engine

import (
	"fmt"
	"sync"
	"testing"
)

// TestStmtRefsConcurrent: goroutines that take and give back a few names
// at once (as the clients of several loops do) never see a name they hold
// counted as unheld, and leave every count at zero and the map empty.
func TestStmtRefsConcurrent(t *testing.T) {
	var r stmtRefs
	names := []string{"a", "b", "c"}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20000 {
				name := names[(g+i)%len(names)]
				r.ref(name)
				if r.held(name) < 1 {
					errs <- fmt.Errorf("%q held but counted %d", name, r.held(name))
					return
				}
				r.unref(name)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, name := range names {
		if n := r.held(name); n != 0 {
			t.Errorf("%q: %d holders left, want 0", name, n)
		}
	}
	r.m.Range(func(k, v any) bool {
		t.Errorf("entry %v left in the map (count %d)", k, v.(*stmtRef).n.Load())
		return true
	})
	if r.gen.Load() == 0 {
		t.Error("no count fell to zero")
	}
}
