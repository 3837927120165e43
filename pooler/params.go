package pooler

import (
	"hash/fnv"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// paramsSig is a hash of the tracked parameters in m, so that attach can
// tell with one comparison whether a server already has a client's
// settings.
func paramsSig(m map[string]string) uint64 {
	h := fnv.New64a()
	for _, k := range engine.TrackedParams {
		h.Write([]byte(m[k]))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// paramSet is a client's tracked parameters (varcache): what it asked for
// at startup, updated by every ParameterStatus it was sent. It is never
// changed once made: a change makes another set. Clients with the same
// values share one (paramSets), so that an idle client costs a pointer
// for them rather than a map of its own.
type paramSet struct {
	m   map[string]string
	sig uint64 // paramsSig(m)
}

// maxParamSets bounds the shared sets a proxy keeps: a set made beyond it
// is the client's own.
const maxParamSets = 4096

// paramSets are the proxy's shared parameter sets, by signature. Sets are
// never removed: there are as many as distinct combinations of the
// tracked parameters' values clients use, up to maxParamSets.
type paramSets struct {
	bySig sync.Map // uint64 -> *paramSet
	n     atomic.Int32
}

// intern returns the shared set holding exactly m (m is not changed
// afterwards by the caller).
func (ps *paramSets) intern(m map[string]string) *paramSet {
	set := &paramSet{m: m, sig: paramsSig(m)}
	if v, ok := ps.bySig.Load(set.sig); ok {
		if old := v.(*paramSet); maps.Equal(old.m, m) {
			return old
		}
		return set // a different set with the same hash: its own
	}
	if ps.n.Load() >= maxParamSets {
		return set
	}
	v, loaded := ps.bySig.LoadOrStore(set.sig, set)
	if !loaded {
		ps.n.Add(1)
		return set
	}
	if old := v.(*paramSet); maps.Equal(old.m, m) {
		return old
	}
	return set
}

// with returns the set that is cur with name set to value.
func (ps *paramSets) with(cur *paramSet, name, value string) *paramSet {
	if v, ok := cur.m[name]; ok && v == value {
		return cur
	}
	m := maps.Clone(cur.m)
	if m == nil {
		m = make(map[string]string, 1)
	}
	m[name] = value
	return ps.intern(m)
}
