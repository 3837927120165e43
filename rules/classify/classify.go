// Package classify is the pooler's fast path to the effects model
// (package rules/effects): it says what a query string does to session
// state, and it is built for the hot path. A statement goes through three
// steps, each cheaper than the next:
//
//  1. A keyword pre-filter over the text (one pass, no allocation) returns
//     an empty Result for statements that cannot change session state: a
//     SELECT, INSERT, UPDATE or DELETE that names none of the functions
//     and words involved. Words in comments never count; words in string
//     constants only make the statement go on to the parser, which then
//     decides.
//  2. A bounded cache keyed by the statement text (a sharded CLOCK cache):
//     a statement seen before (a prepared statement, an ORM's SET) is
//     answered without parsing and without allocating.
//  3. effects.Query: the PostgreSQL parser (pg_query) and the model.
//
// It imports the model and the parser wrapper, never the pooler.
package classify

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v5"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// Result is what one query string does to session state.
type Result struct {
	// Effects lists the effects of every statement of the string, in
	// order. It is shared with the cache: callers must not modify it.
	Effects []effects.Effect
	// Fingerprint is pg_query's fingerprint of the whole string (the
	// same for texts that differ only in constants, whitespace and
	// comments; fmt "%016x" gives pg_query's string form). It is computed
	// only when Effects is not empty, and is 0 otherwise.
	Fingerprint uint64
	// ParseError is set when the string does not parse. PostgreSQL then
	// runs none of it, so there are no effects.
	ParseError bool
}

// SessionScoped reports whether the result has an effect that outlives
// the transaction (any effect without Local).
func (r Result) SessionScoped() bool {
	for i := range r.Effects {
		if !r.Effects[i].Local {
			return true
		}
	}
	return false
}

// Options configures a Classifier.
type Options struct {
	// CacheSize is the number of statement texts whose results are kept.
	// 0 means DefaultCacheSize; a negative value turns the cache off.
	CacheSize int
	// MaxCachedLen is the longest statement text that is cached (longer
	// ones are classified every time, so a client cannot fill memory
	// with huge texts). 0 means DefaultMaxCachedLen.
	MaxCachedLen int
}

// Defaults for Options.
const (
	DefaultCacheSize    = 4096
	DefaultMaxCachedLen = 16 << 10
)

// Classifier classifies statements. It is safe for concurrent use.
type Classifier struct {
	cache  *cache // nil when off
	maxLen int
}

// New returns a Classifier.
func New(opts Options) *Classifier {
	c := &Classifier{maxLen: opts.MaxCachedLen}
	if c.maxLen <= 0 {
		c.maxLen = DefaultMaxCachedLen
	}
	size := opts.CacheSize
	if size == 0 {
		size = DefaultCacheSize
	}
	if size > 0 {
		c.cache = newCache(size)
	}
	return c
}

// Classify says what the query string sql (one or more statements, as in
// a simple Query message or a Parse message) does to session state. It
// does not keep sql: the text may be a buffer the caller reuses.
func (c *Classifier) Classify(sql string) Result { return c.ClassifyKnown(sql, nil) }

// ClassifyKnown is Classify for a caller that knows routines that change
// nothing: known (may be nil) reports that of a name, in any case. A
// statement whose only reason to be parsed would be calls of such
// routines is not parsed; the Result of a statement that is still lists
// every call.
func (c *Classifier) ClassifyKnown(sql string, known func(name string) bool) Result {
	if !mayAffect(sql, known) {
		return Result{}
	}
	cacheable := c.cache != nil && len(sql) <= c.maxLen
	var h uint64
	if cacheable {
		h = c.cache.hash(sql)
		if r, ok := c.cache.get(h, sql); ok {
			return r
		}
	}
	r := classify(sql)
	if cacheable {
		c.cache.put(h, strings.Clone(sql), r)
	}
	return r
}

// classify parses sql and collects its effects.
func classify(sql string) Result {
	out, parseError := effects.Query(sql)
	if parseError {
		return Result{ParseError: true}
	}
	r := Result{Effects: out}
	if len(out) > 0 {
		r.Fingerprint, _ = pg.FingerprintToUInt64(sql)
	}
	return r
}

// Classify classifies sql without a cache.
func Classify(sql string) Result {
	if !mayAffect(sql, nil) {
		return Result{}
	}
	return classify(sql)
}
