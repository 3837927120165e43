package pooler

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestRoutineCacheConcurrentStore: stores of verdicts at once, of one
// database and of two, lose none of them.
func TestRoutineCacheConcurrentStore(t *testing.T) {
	var rc routineCache
	now := time.Now()
	gen := rc.gen.Load()
	const writers, each = 4, 200
	var wg sync.WaitGroup
	for w := range writers {
		db := []string{"a", "b"}[w%2]
		wg.Go(func() {
			for i := range each {
				name := fmt.Sprintf("f%d_%d", w, i)
				rc.store(db, map[string]routineVerdict{name: {clean: true}}, nil, gen, now)
			}
		})
	}
	wg.Wait()
	for w := range writers {
		db := []string{"a", "b"}[w%2]
		for i := range each {
			if name := fmt.Sprintf("f%d_%d", w, i); !rc.clean(db, name, now) {
				t.Fatalf("verdict on %s in %s lost", name, db)
			}
		}
	}
}
