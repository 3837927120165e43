package classify

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// cache maps statement texts to results. It is split into shards, each a
// fixed array of entries under its own lock, evicted with the CLOCK
// algorithm (an approximation of LRU in which a hit only sets a bit): a
// hit takes a shard's read lock, so hits on many goroutines do not wait
// for each other, and neither hits nor evictions allocate.
type cache struct {
	seed   maphash.Seed
	shards []shard
	mask   uint64
}

type shard struct {
	mu      sync.RWMutex
	index   map[uint64]int32 // text hash → entry
	entries []entry
	hand    int
	_       [64]byte // keep shards' locks on separate cache lines
}

type entry struct {
	hash uint64
	text string
	res  Result
	used atomic.Bool // set on a hit, cleared as the clock hand passes
}

// newCache returns a cache for about size texts.
func newCache(size int) *cache {
	n := 1
	for n < 16 && n*32 < size {
		n *= 2
	}
	per := (size + n - 1) / n
	c := &cache{seed: maphash.MakeSeed(), shards: make([]shard, n), mask: uint64(n - 1)}
	for i := range c.shards {
		c.shards[i].index = make(map[uint64]int32, per)
		c.shards[i].entries = make([]entry, 0, per)
	}
	return c
}

func (c *cache) hash(text string) uint64 { return maphash.String(c.seed, text) }

// shard picks a shard by the hash's high bits (the index map uses all).
func (c *cache) shard(h uint64) *shard { return &c.shards[(h>>48)&c.mask] }

func (c *cache) get(h uint64, text string) (Result, bool) {
	s := c.shard(h)
	s.mu.RLock()
	i, ok := s.index[h]
	if ok {
		e := &s.entries[i]
		if e.text != text {
			s.mu.RUnlock()
			return Result{}, false // a hash collision: classify again
		}
		if !e.used.Load() {
			e.used.Store(true)
		}
		r := e.res
		s.mu.RUnlock()
		return r, true
	}
	s.mu.RUnlock()
	return Result{}, false
}

// put stores the result for text (which the cache keeps: the caller must
// pass its own copy).
func (c *cache) put(h uint64, text string, r Result) {
	s := c.shard(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[h]; ok {
		// Another goroutine classified it first, or a colliding text:
		// the newer one replaces it.
		e := &s.entries[i]
		e.text, e.res = text, r
		return
	}
	if len(s.entries) < cap(s.entries) {
		s.entries = append(s.entries, entry{hash: h, text: text, res: r})
		s.index[h] = int32(len(s.entries) - 1)
		return
	}
	// Move the hand past recently used entries, clearing their bit, to
	// the first one not used since the hand last passed.
	for {
		e := &s.entries[s.hand]
		if e.used.Load() {
			e.used.Store(false)
			s.hand = (s.hand + 1) % len(s.entries)
			continue
		}
		delete(s.index, e.hash)
		e.hash, e.text, e.res = h, text, r
		s.index[h] = int32(s.hand)
		s.hand = (s.hand + 1) % len(s.entries)
		return
	}
}

// len returns the number of texts cached.
func (c *cache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.index)
		s.mu.RUnlock()
	}
	return n
}
