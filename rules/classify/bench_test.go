package classify

import (
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkClassify measures the three paths of Classify: a statement the
// pre-filter turns away, a cache hit, and a parse (each iteration a text
// the cache has not seen).
func BenchmarkClassify(b *testing.B) {
	const plain = "SELECT u.id, u.name, u.email FROM users u WHERE u.id = $1 AND u.deleted_at IS NULL"
	const set = "SET search_path = app, public"
	b.Run("plain-select", func(b *testing.B) {
		c := New(Options{})
		b.ReportAllocs()
		for b.Loop() {
			_ = c.Classify(plain)
		}
	})
	b.Run("cached-set", func(b *testing.B) {
		c := New(Options{})
		c.Classify(set)
		b.ReportAllocs()
		for b.Loop() {
			_ = c.Classify(set)
		}
	})
	b.Run("uncached-set", func(b *testing.B) {
		c := New(Options{})
		texts := distinct(b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			_ = c.Classify(texts[i])
		}
	})
	b.Run("plain-select-parallel", func(b *testing.B) {
		c := New(Options{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = c.Classify(plain)
			}
		})
	})
	b.Run("cached-set-parallel", func(b *testing.B) {
		c := New(Options{})
		var hot [64]string
		for i := range hot {
			hot[i] = "SET app.n = " + strconv.Itoa(i)
			c.Classify(hot[i])
		}
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := int(next.Add(1))
			for pb.Next() {
				_ = c.Classify(hot[i&63])
				i++
			}
		})
	})
	b.Run("uncached-set-parallel", func(b *testing.B) {
		c := New(Options{})
		texts := distinct(b.N)
		var next atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = c.Classify(texts[int(next.Add(1)-1)%len(texts)])
			}
		})
	})
}

// distinct returns n different SET statements.
func distinct(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "SET app.tenant_id = " + strconv.Itoa(i)
	}
	return out
}
