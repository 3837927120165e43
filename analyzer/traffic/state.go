package traffic

// The session state analyze follows across transactions: what each
// statement makes, uses and ends, and when that is a finding.

import (
	"github.com/pgpoolcheck/pgpoolcheck/rules"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// itemKind is a kind of session state followed across transactions.
type itemKind int

const (
	itemSet itemKind = iota
	itemRole
	itemLock
	itemListen
	itemTemp
	itemCursor
	itemPrepare
)

// item is one piece of session state a statement created, as analyze
// follows it: the session's effects.Session holds it (h), the item keeps
// what a finding needs.
type item struct {
	kind    itemKind
	name    string
	h       *effects.Held
	tx      int64
	ex      *stmtRun
	finding *rules.Finding

	laterTx   int   // later transactions the session ran while it existed
	read      bool  // a later transaction read it (SHOW, current_setting)
	usedLater bool  // a later transaction used it
	endedTx   int64 // the later transaction that ended it (unlock, UNLISTEN, DROP …)
	notified  int   // notifications that arrived on its channel
}

// itemKinds are the kinds of items the state made by effects of each kind
// becomes; the state of other kinds (a loaded library) is not followed.
var itemKinds = map[effects.Kind]itemKind{
	effects.SetParam: itemSet, effects.SetRole: itemRole, effects.SessionAuth: itemRole,
	effects.AdvisoryLock: itemLock, effects.Listen: itemListen, effects.CreateTemp: itemTemp,
	effects.DeclareHold: itemCursor, effects.Prepare: itemPrepare,
}

// find returns the live items of a kind with a name.
func (s *session) find(kind itemKind, name string) []*item {
	var out []*item
	for _, it := range s.items {
		if it.kind == kind && (name == "" || it.name == name) {
			out = append(out, it)
		}
	}
	return out
}

// addItem follows state h that execution e made.
func (s *session) addItem(e *stmtRun, h *effects.Held) {
	kind, ok := itemKinds[h.Kind]
	if !ok || h.Local || h.Protocol {
		// Transaction-scoped state (SET LOCAL, ON COMMIT DROP) ends with
		// its transaction: it never crosses a boundary.
		return
	}
	name := h.Name
	switch {
	case kind == itemRole:
		name = "role"
	case kind == itemSet && name == "":
		name = "?"
	}
	it := &item{kind: kind, name: name, h: h, tx: s.cur.num, ex: e}
	s.items = append(s.items, it)
	s.itemOf[h] = it
	e.items = append(e.items, it)
}

// ended removes the items of state the session no longer holds: each is
// reported when it crossed a transaction boundary in a way that matters
// for its kind (end), or, with silently, dropped.
func (s *session) ended(hs []*effects.Held, silently bool) {
	for _, h := range hs {
		it := s.itemOf[h]
		switch {
		case it == nil:
		case silently:
			s.remove(it)
		default:
			s.end(it)
		}
	}
}

// end removes an item, reporting it when it crossed a transaction
// boundary in a way that matters for its kind.
func (s *session) end(it *item) {
	s.remove(it)
	if it.tx == s.cur.num && it.finding == nil {
		return // made and cleaned in one transaction
	}
	if it.endedTx == 0 && it.tx < s.cur.num {
		it.endedTx = s.cur.num
	}
	s.report(it)
}

// apply follows what one execution does to the session's state.
func (s *session) apply(e *stmtRun) {
	f := e.p.facts
	now := s.cur.num
	later := func(it *item) bool { return it.tx < now }

	// Uses of state made earlier.
	for _, name := range f.reads {
		for _, it := range s.items {
			if (it.kind == itemSet && (it.name == name || it.name == "?")) || (it.kind == itemRole && (name == "role" || name == "session_authorization")) {
				if later(it) {
					it.read = true
				}
			}
		}
	}
	uses := func(kind itemKind, names []string) {
		for _, name := range names {
			for _, it := range s.find(kind, name) {
				if later(it) {
					it.usedLater = true
				}
			}
		}
	}
	uses(itemTemp, f.rels)
	uses(itemCursor, f.cursors)
	uses(itemPrepare, f.executes)
	for _, key := range f.currvals {
		src, ok := s.nextval[key]
		if !ok {
			src = s.insertTx
		}
		if src > 0 && src < now {
			e.seqCross = true
		}
	}
	if f.lastval {
		src := max(s.anyNext, s.insertTx)
		if src > 0 && src < now {
			e.seqCross = true
		}
	}

	// What it ends and makes, paired by the one session model.
	for _, c := range f.changes {
		st := s.state.Apply(c)
		for _, h := range st.Ended {
			if h.Protocol {
				// DEALLOCATE and DISCARD ALL end protocol-level
				// statements too: they share SQL PREPARE's names.
				if c.Kind == effects.Deallocate {
					s.protocolDeallocate(h.Name, s.named[h.Name], e)
				}
				delete(s.named, h.Name)
				continue
			}
			if it := s.itemOf[h]; it != nil && c.Kind == effects.DropTemp && later(it) {
				it.usedLater = true // DROP uses the object
			}
		}
		s.ended(st.Ended, false)
		if st.New {
			s.addItem(e, st.Held)
		}
	}
	if f.rollbackTo {
		s.cur.recovered = true
	}
	for _, key := range f.nextvals {
		s.nextval[key] = now
		s.anyNext = now
	}
	if f.insert {
		s.insertTx = now
	}
}

// stateRules are the SQL rules whose findings stand for session state that
// analyze follows (the rules that judge a Crossing), with the kind of item
// the state becomes; their findings are kept only when the state crossed a
// transaction boundary. Findings of the other SQL rules are kept as they
// are.
var stateRules = func() map[string]itemKind {
	m := map[string]itemKind{}
	for k, kind := range itemKinds {
		if r := rules.Covering(k); r != nil && r.Crossed != nil {
			m[r.ID] = kind
		}
	}
	return m
}()

func (s *session) alive(it *item) bool {
	for _, x := range s.items {
		if x == it {
			return true
		}
	}
	return false
}

// remove drops an item without reporting it.
func (s *session) remove(it *item) {
	delete(s.itemOf, it.h)
	for i, x := range s.items {
		if x == it {
			s.items = append(s.items[:i], s.items[i+1:]...)
			return
		}
	}
}

// report turns an item that has ended (or outlived its session) into an
// occurrence when what it did crossed a transaction boundary: the rule of
// its finding judges that and words the note (rules.Crossing).
func (s *session) report(it *item) {
	if it.finding == nil {
		return
	}
	r := it.finding.Rule
	if r.Crossed == nil {
		return
	}
	note, ok := r.Crossed(rules.Crossing{
		LaterTx: it.laterTx, Read: it.read, Used: it.usedLater,
		Released: it.endedTx > 0, Notified: it.notified,
	})
	if !ok {
		return
	}
	o := s.occurrence(it.finding.Rule, it.finding.Severity, it.ex.file, it.ex.line, it.ex.t)
	s.fill(&o, it.ex, it.finding)
	o.note = note
	s.a.add(o)
}
