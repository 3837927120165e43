package classify

import (
	"fmt"
	"sync"
	"testing"
)

func TestCacheEvicts(t *testing.T) {
	c := New(Options{CacheSize: 64})
	for i := 0; i < 1000; i++ {
		sql := fmt.Sprintf("SET app.n = %d", i)
		r := c.Classify(sql)
		if len(r.Effects) != 1 || r.Effects[0].Value != fmt.Sprint(i) {
			t.Fatalf("%s: %+v", sql, r)
		}
	}
	if n := c.cache.len(); n > 64 || n < 32 {
		t.Errorf("cache holds %d texts, want at most 64", n)
	}
}

func TestCacheKeepsUsed(t *testing.T) {
	c := newCache(4) // one shard of four entries
	hot := "SET hot = 1"
	c.put(c.hash(hot), hot, Result{Fingerprint: 1})
	for i := 0; i < 100; i++ {
		if _, ok := c.get(c.hash(hot), hot); !ok {
			t.Fatalf("hot entry evicted after %d inserts", i)
		}
		s := fmt.Sprint("SET cold = ", i)
		c.put(c.hash(s), s, Result{Fingerprint: 2})
	}
}

func TestCacheCollision(t *testing.T) {
	c := newCache(4)
	c.put(7, "SET a = 1", Result{Fingerprint: 1})
	if _, ok := c.get(7, "SET b = 1"); ok {
		t.Error("a colliding text was answered from the cache")
	}
	c.put(7, "SET b = 1", Result{Fingerprint: 2})
	if r, ok := c.get(7, "SET b = 1"); !ok || r.Fingerprint != 2 {
		t.Errorf("got %v %v", r, ok)
	}
}

func TestCacheOff(t *testing.T) {
	c := New(Options{CacheSize: -1})
	if got := describeAll(c.Classify("LISTEN x")); got != "listen x" {
		t.Error(got)
	}
	if c.cache != nil {
		t.Error("cache on")
	}
}

func TestLongTextNotCached(t *testing.T) {
	c := New(Options{MaxCachedLen: 10})
	c.Classify("SET a.b = 1234567890")
	if c.cache.len() != 0 {
		t.Error("long text cached")
	}
}

// TestConcurrent runs many goroutines over a small cache (run with -race).
func TestConcurrent(t *testing.T) {
	c := New(Options{CacheSize: 32})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				tc := cases[(i*7+g)%len(cases)]
				if got := describeAll(c.Classify(tc.sql)); got != tc.want {
					t.Errorf("Classify(%q) = %s, want %s", tc.sql, got, tc.want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
