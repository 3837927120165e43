package analyzer

// The session state analyze follows across transactions: what each
// statement makes, uses and ends, and when that is a finding.

import (
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/rules"
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

// item is one piece of session state a statement created.
type item struct {
	kind       itemKind
	name       string
	tx         int64
	ex         *stmtRun
	finding    *rules.Finding
	commitDrop bool

	laterTx   int   // later transactions the session ran while it existed
	read      bool  // a later transaction read it (SHOW, current_setting)
	usedLater bool  // a later transaction used it
	endedTx   int64 // the later transaction that ended it (unlock, UNLISTEN, DROP …)
	notified  int   // notifications that arrived on its channel
}

// live returns the live items of a kind with a name.
func (s *session) find(kind itemKind, name string) []*item {
	var out []*item
	for _, it := range s.items {
		if it.kind == kind && (name == "" || it.name == name) {
			out = append(out, it)
		}
	}
	return out
}

func (s *session) addItem(e *stmtRun, kind itemKind, name string) *item {
	it := &item{kind: kind, name: name, tx: s.cur.num, ex: e}
	s.items = append(s.items, it)
	e.items = append(e.items, it)
	return it
}

// end removes an item, reporting it when it crossed a transaction
// boundary in a way that matters for its kind.
func (s *session) end(it *item) {
	for i, x := range s.items {
		if x == it {
			s.items = append(s.items[:i], s.items[i+1:]...)
			break
		}
	}
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
	for _, name := range f.rels {
		for _, it := range s.find(itemTemp, name) {
			if later(it) {
				it.usedLater = true
			}
		}
	}
	for _, name := range f.cursors {
		for _, it := range s.find(itemCursor, name) {
			if later(it) {
				it.usedLater = true
			}
		}
	}
	for _, name := range f.deallocs {
		if ps, ok := s.named[name]; ok {
			s.protocolDeallocate(name, ps, e)
			delete(s.named, name)
		}
	}
	if f.deallocAll || f.discardAll {
		clear(s.named)
	}
	for _, name := range append(f.executes, f.deallocs...) {
		for _, it := range s.find(itemPrepare, name) {
			if later(it) {
				it.usedLater = true
			}
		}
	}
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

	// What it ends.
	if f.discardAll {
		for _, it := range append([]*item(nil), s.items...) {
			s.end(it)
		}
	}
	if f.resetAll {
		for _, it := range s.find(itemSet, "") {
			s.end(it)
		}
	}
	for _, name := range f.resets {
		for _, it := range s.find(itemSet, name) {
			s.end(it)
		}
	}
	if f.resetRole {
		for _, it := range s.find(itemRole, "") {
			s.end(it)
		}
	}
	for _, key := range f.unlocks {
		locks := s.find(itemLock, key)
		if len(locks) == 0 {
			// The values of query parameters are not in the capture: an
			// unlock may release a lock whose key was a parameter or an
			// expression.
			for _, it := range s.find(itemLock, "") {
				if !knownKey(it.name) {
					locks = append(locks, it)
				}
			}
		}
		if len(locks) > 0 {
			s.end(locks[len(locks)-1])
		}
	}
	if f.unlockAll {
		for _, it := range s.find(itemLock, "") {
			s.end(it)
		}
	}
	for _, name := range f.unlistens {
		for _, it := range s.find(itemListen, name) {
			s.end(it)
		}
	}
	if f.unlistenAll {
		for _, it := range s.find(itemListen, "") {
			s.end(it)
		}
	}
	for _, name := range f.drops {
		for _, it := range s.find(itemTemp, name) {
			if later(it) {
				it.usedLater = true
			}
			s.end(it)
		}
	}
	if f.discardTemp {
		for _, it := range s.find(itemTemp, "") {
			s.end(it)
		}
	}
	for _, name := range f.closes {
		for _, it := range s.find(itemCursor, name) {
			s.end(it)
		}
	}
	if f.closeAll {
		for _, it := range s.find(itemCursor, "") {
			s.end(it)
		}
	}
	for _, name := range f.deallocs {
		for _, it := range s.find(itemPrepare, name) {
			s.end(it)
		}
	}
	if f.deallocAll {
		for _, it := range s.find(itemPrepare, "") {
			s.end(it)
		}
	}

	// What it makes.
	for _, name := range f.sets {
		for _, it := range s.find(itemSet, name) {
			s.end(it) // set again: the older value is gone
		}
		s.addItem(e, itemSet, name)
	}
	if f.role {
		for _, it := range s.find(itemRole, "") {
			s.end(it)
		}
		s.addItem(e, itemRole, "role")
	}
	for _, key := range f.locks {
		s.addItem(e, itemLock, key)
	}
	for _, name := range f.listens {
		if len(s.find(itemListen, name)) == 0 {
			s.addItem(e, itemListen, name)
		}
	}
	for _, t := range f.temps {
		s.addItem(e, itemTemp, t.name).commitDrop = t.commitDrop
	}
	for _, name := range f.holds {
		s.addItem(e, itemCursor, name)
	}
	for _, name := range f.prepares {
		s.addItem(e, itemPrepare, name)
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

// knownKey reports whether an advisory lock key is made of constants only.
func knownKey(key string) bool {
	for _, k := range strings.Split(key, ",") {
		if k == "?" || strings.HasPrefix(k, "$") {
			return false
		}
	}
	return true
}

// stateRules are the SQL rules whose findings stand for session state that
// analyze follows; their findings are kept only when the state crossed a
// transaction boundary. Findings of the other SQL rules are kept as they
// are.
var stateRules = map[string]itemKind{
	rules.SessionSet.ID:          itemSet,
	rules.SessionRole.ID:         itemRole,
	rules.AdvisoryLockSession.ID: itemLock,
	rules.Listen.ID:              itemListen,
	rules.TempTable.ID:           itemTemp,
	rules.CursorWithHold.ID:      itemCursor,
	rules.SQLPrepare.ID:          itemPrepare,
}

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
	for i, x := range s.items {
		if x == it {
			s.items = append(s.items[:i], s.items[i+1:]...)
			return
		}
	}
}

// report turns an item that has ended (or outlived its session) into an
// occurrence when what it did crossed a transaction boundary.
func (s *session) report(it *item) {
	if it.finding == nil {
		return
	}
	var note string
	switch it.kind {
	case itemSet, itemRole:
		if it.laterTx == 0 {
			return
		}
		if it.read {
			note = "a later transaction read it (SHOW or current_setting)"
		} else {
			note = "the session ran later transactions, none of which read it back"
		}
	case itemLock:
		if it.endedTx > 0 {
			note = "still held when its transaction ended, released in a later transaction"
		} else {
			note = "still held when its transaction ended, never released by the session"
		}
	case itemListen:
		if it.notified > 0 {
			note = "notifications arrived after its transaction ended"
		} else {
			note = "listening after its transaction ended; no notification arrived"
		}
	case itemTemp, itemCursor, itemPrepare:
		if !it.usedLater {
			return
		}
		note = "used in a later transaction"
	}
	o := s.occurrence(it.finding.Rule, it.finding.Severity, it.ex.file, it.ex.line, it.ex.t)
	s.fill(&o, it.ex, it.finding)
	o.note = note
	s.a.add(o)
}
