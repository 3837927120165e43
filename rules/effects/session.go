package effects

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v5"
)

// Held is one piece of state a server session holds: a parameter set, a
// role, an advisory lock, a LISTEN, a temporary object, a WITH HOLD
// cursor, a prepared statement or a loaded library.
type Held struct {
	// Kind is the kind of the effect that made it: SetParam, SetRole,
	// SessionAuth, AdvisoryLock, Listen, CreateTemp, DeclareHold, Prepare
	// or Load.
	Kind Kind
	// Name is the parameter (empty when only known at run time), channel,
	// object, cursor, statement or library.
	Name string
	// Effect is the effect that made it (for a protocol statement, a
	// Prepare with Protocol set).
	Effect Effect
	// Local marks state that ends with the transaction: SET LOCAL,
	// set_config(…, true), a temporary table ON COMMIT DROP.
	Local bool
	// Protocol marks a named statement of the extended protocol (Parse),
	// which shares its names with SQL PREPARE.
	Protocol bool

	id    int // order of making, from 1
	alive bool
}

// Step is what one effect or event did to the session.
type Step struct {
	// Held is the state the effect made, or renewed: a LISTEN of a
	// channel already listened to, a CREATE TEMP … IF NOT EXISTS of an
	// object that exists. New tells them apart.
	Held *Held
	New  bool
	// Ended is the state it ended, in the order it was made. After a
	// rollback, Restored is the state the rollback brought back.
	Ended, Restored []*Held
	// Guess is set when the effect names its state only at run time (an
	// unlock of a key that is a parameter, or of a key no lock was taken
	// with while locks of unknown keys are held): Ended is the likeliest
	// match, but only the server knows.
	Guess bool
}

// Session accumulates what a server session holds over the effects of
// the statements it runs, in order, and over the transactions around
// them. It is the one place where the pairing rules live: RESET and
// RESET ALL end parameters, the unlocks end advisory locks, UNLISTEN
// ends channels, DROP and DISCARD TEMP end temporary objects, CLOSE ends
// cursors, DEALLOCATE ends prepared statements (SQL and protocol), and
// DISCARD ALL ends all of it but loaded libraries. A ROLLBACK (or a
// ROLLBACK TO SAVEPOINT) undoes the state made since the transaction (or
// the savepoint) began and brings back the state it ended, except for
// what PostgreSQL does not undo: advisory locks and their unlocks,
// prepared statements, LOAD, and CLOSE of a cursor. SET LOCAL and
// ON COMMIT DROP end with their transaction.
//
// Outside Begin … Commit each effect runs in a transaction of its own:
// its transaction-scoped forms (SET LOCAL, ON COMMIT DROP) leave
// nothing. Session does no I/O, parses nothing and decides no hazard:
// its callers (the SQL rules, the traffic analysis, a pooler) keep what
// they need per Held and decide what it means. The zero value is an
// empty session.
type Session struct {
	// Strict is for a caller that must never believe the session holds
	// fewer advisory locks than it may (a pooler that hands the server to
	// another client): an unlock ends a lock of another key only when
	// both keys are known only at run time (taken to pair, as
	// pg_advisory_lock($1) and pg_advisory_unlock($1) do), never a lock
	// of a known key, and an unlock of a known key that no lock was taken
	// with ends none: while locks of run-time keys are held, its Step is
	// a Guess with nothing Ended (it may have released one of them, which
	// only the server knows).
	Strict bool

	holds  []*Held
	frames []frame // the open transaction and its savepoints; empty outside one
	next   int
}

// frame is the transaction (name "") or a savepoint, with the state made
// and ended since it began.
type frame struct {
	name        string
	made, ended []*Held
}

// Holds returns the state the session holds, in the order it was made.
// The slice is the session's: do not change it.
func (s *Session) Holds() []*Held { return s.holds }

// Alive reports whether the session still holds h.
func (s *Session) Alive(h *Held) bool { return h != nil && h.alive }

// InTx reports whether a transaction is open (Begin).
func (s *Session) InTx() bool { return len(s.frames) > 0 }

// Has reports whether the session holds state of kind k.
func (s *Session) Has(k Kind) bool {
	return slices.ContainsFunc(s.holds, func(h *Held) bool { return h.Kind == k })
}

// Find returns the state of kind k named name that the session holds, in
// the order it was made. Parameter names of run-time values are "".
func (s *Session) Find(k Kind, name string) []*Held {
	var out []*Held
	for _, h := range s.holds {
		if h.Kind == k && h.Name == name {
			out = append(out, h)
		}
	}
	return out
}

// Apply records one effect the session ran. Effects that only read state
// or end transactions (ReadParam and the kinds after it, CallRoutine,
// RoutineChange) change nothing here: transactions are Begin, Commit,
// Rollback and the savepoint methods.
func (s *Session) Apply(e Effect) Step {
	var st Step
	if e.Local && !s.InTx() {
		// SET LOCAL or ON COMMIT DROP in a transaction of its own: gone
		// when the statement ends.
		return st
	}
	switch e.Kind {
	case SetParam:
		// A later SET replaces the earlier value; SET LOCAL only
		// overrides it until the transaction ends. A name known only at
		// run time is one slot: which parameter it was, only the server
		// knows.
		st.end(s, func(h *Held) bool { return h.Kind == SetParam && h.Name == e.Name && (h.Local || !e.Local) })
		st.make(s, e)
	case ResetParam:
		st.end(s, func(h *Held) bool { return h.Kind == SetParam && h.Name == e.Name && (h.Local || !e.Local) })
	case ResetAll:
		st.end(s, func(h *Held) bool { return h.Kind == SetParam && (h.Local || !e.Local) })
	case SetRole, ResetRole:
		// SET ROLE replaces the role; the session authorization stays.
		st.end(s, func(h *Held) bool { return h.Kind == SetRole && (h.Local || !e.Local) })
		if e.Kind == SetRole {
			st.make(s, e)
		}
	case SessionAuth, ResetSessionAuth:
		// SET SESSION AUTHORIZATION (and its reset) also resets the role.
		st.end(s, func(h *Held) bool { return (h.Kind == SetRole || h.Kind == SessionAuth) && (h.Local || !e.Local) })
		if e.Kind == SessionAuth {
			st.make(s, e)
		}
	case AdvisoryLock:
		st.make(s, e) // locks stack: each needs its own unlock
	case AdvisoryUnlock:
		s.unlock(&st, e)
	case Listen, DeclareHold, Prepare, Load:
		// LISTEN again keeps listening; a cursor or statement name that
		// exists is refused; a library loads once.
		st.renew(s, e, func(h *Held) bool { return h.Kind == e.Kind && h.Name == e.Name })
	case CreateTemp:
		// A name that exists is refused (or kept by IF NOT EXISTS).
		st.renew(s, e, func(h *Held) bool {
			return h.Kind == CreateTemp && h.Name == e.Name && sameNamespace(h.Effect.Object, e.Object)
		})
	case DropTemp:
		st.end(s, func(h *Held) bool {
			return h.Kind == CreateTemp && h.Name == e.Name && sameNamespace(h.Effect.Object, e.Object)
		})
	case Unlisten, CloseCursor, Deallocate:
		st.end(s, func(h *Held) bool { return h.Kind == endsOne[e.Kind] && h.Name == e.Name })
	case UnlistenAll, CloseAll, DeallocateAll, DiscardTemp, AdvisoryUnlockAll:
		st.end(s, func(h *Held) bool { return h.Kind == endsAll[e.Kind] })
	case DiscardAll:
		// CLOSE ALL, SET SESSION AUTHORIZATION DEFAULT, RESET ALL,
		// DEALLOCATE ALL, UNLISTEN *, pg_advisory_unlock_all(), DISCARD
		// TEMP: a loaded library stays.
		st.end(s, func(h *Held) bool { return h.Kind != Load })
	}
	return st
}

// endsOne and endsAll name the kind of state that an effect ends one of
// by name (UNLISTEN name, CLOSE name, DEALLOCATE name) or all of.
var (
	endsOne = map[Kind]Kind{Unlisten: Listen, CloseCursor: DeclareHold, Deallocate: Prepare}
	endsAll = map[Kind]Kind{UnlistenAll: Listen, CloseAll: DeclareHold, DeallocateAll: Prepare,
		DiscardTemp: CreateTemp, AdvisoryUnlockAll: AdvisoryLock}
)

// Releases reports whether the unlock u may release the advisory lock l:
// pg_advisory_unlock_all releases every lock, an unlock one of the same
// key and mode (the one-bigint and two-int4 keys apart); when either key
// is only known at run time, it may be any.
func Releases(u, l Effect) bool {
	switch {
	case u.Kind == AdvisoryUnlockAll:
		return true
	case !u.KeyKnown || !l.KeyKnown:
		return true
	}
	return sameLock(u, l)
}

// sameLock reports whether the advisory lock functions of a and b, whose
// keys are known, name one lock: the same key and mode. PostgreSQL lists
// it once (one row of pg_locks) however many times it is held.
func sameLock(a, b Effect) bool { return a.Key == b.Key && a.Pair == b.Pair && a.Shared == b.Shared }

// unlock ends one advisory lock that u releases (Releases): the latest of
// the same key and mode; for a key known only at run time, the latest
// taken with the same argument, else the latest whose key is unknown,
// else the latest one. Only the first is no Guess. A Strict session
// guesses less (see Session).
func (s *Session) unlock(st *Step, u Effect) {
	locks := s.FindKind(AdvisoryLock)
	pick := func(match func(l Effect) bool) *Held {
		for i := len(locks) - 1; i >= 0; i-- {
			if l := locks[i].Effect; Releases(u, l) && match(l) {
				return locks[i]
			}
		}
		return nil
	}
	h := pick(func(l Effect) bool { return u.KeyKnown && l.KeyKnown })
	if h == nil {
		may := func(l Effect) bool { return !s.Strict || !u.KeyKnown && !l.KeyKnown }
		h = pick(func(l Effect) bool { return may(l) && !u.KeyKnown && l.Arg == u.Arg && l.Shared == u.Shared })
		if h == nil {
			h = pick(func(l Effect) bool { return may(l) && !l.KeyKnown })
		}
		if h == nil {
			h = pick(may)
		}
		st.Guess = h != nil || s.Strict && u.KeyKnown && slices.ContainsFunc(locks, func(l *Held) bool { return !l.Effect.KeyKnown })
	}
	if h != nil {
		st.end(s, func(x *Held) bool { return x == h })
	}
}

// FindKind returns the state of kind k the session holds, in the order
// it was made.
func (s *Session) FindKind(k Kind) []*Held {
	var out []*Held
	for _, h := range s.holds {
		if h.Kind == k {
			out = append(out, h)
		}
	}
	return out
}

// sameNamespace reports whether temporary objects of kinds a and b share
// their names (Namespace).
func sameNamespace(a, b string) bool { return Namespace(a) == Namespace(b) }

// Namespace names the names a temporary object of kind object (an Object
// of CreateTemp or DropTemp) shares: "" for relations, which share one,
// "routine" for functions, procedures and aggregates (DROP ROUTINE drops
// any of them), the kind itself for other objects.
func Namespace(object string) string {
	switch {
	case object == "" || IsRelationObject(object):
		return ""
	case object == "function" || object == "procedure" || object == "routine" || object == "aggregate":
		return "routine"
	}
	return object
}

// make adds the state e makes.
func (st *Step) make(s *Session, e Effect) {
	s.next++
	h := &Held{Kind: e.Kind, Name: e.Name, Effect: e, Local: e.Local, id: s.next, alive: true}
	s.holds = append(s.holds, h)
	if len(s.frames) > 0 {
		f := &s.frames[len(s.frames)-1]
		f.made = append(f.made, h)
	}
	st.Held, st.New = h, true
}

// renew makes the state e makes unless the session holds it already.
func (st *Step) renew(s *Session, e Effect, same func(h *Held) bool) {
	for _, h := range s.holds {
		if same(h) {
			st.Held = h
			return
		}
	}
	st.make(s, e)
}

// end ends the state that matches.
func (st *Step) end(s *Session, match func(h *Held) bool) {
	kept := s.holds[:0]
	for _, h := range s.holds {
		if !match(h) {
			kept = append(kept, h)
			continue
		}
		h.alive = false
		st.Ended = append(st.Ended, h)
		if len(s.frames) > 0 {
			f := &s.frames[len(s.frames)-1]
			f.ended = append(f.ended, h)
		}
	}
	clear(s.holds[len(kept):])
	s.holds = kept
}

// Forget drops h without an effect: the statement that made it failed.
func (s *Session) Forget(h *Held) {
	var st Step
	st.end(s, func(x *Held) bool { return x == h })
	// A failed statement made nothing that a rollback should bring back.
	for i := range s.frames {
		f := &s.frames[i]
		f.ended = slices.DeleteFunc(f.ended, func(x *Held) bool { return x == h })
	}
}

// Parse records a named statement of the extended protocol (an empty
// name is the unnamed statement, which holds nothing across a Sync the
// way a name does, and is not followed). Parse of a name that exists
// replaces it.
func (s *Session) Parse(name string) Step {
	var st Step
	if name == "" {
		return st
	}
	st.end(s, func(h *Held) bool { return h.Protocol && h.Name == name })
	st.make(s, Effect{Kind: Prepare, Name: name, Location: -1})
	st.Held.Protocol = true
	return st
}

// CloseStatement records a protocol Close of a named statement.
func (s *Session) CloseStatement(name string) Step {
	var st Step
	st.end(s, func(h *Held) bool { return h.Kind == Prepare && h.Name == name })
	return st
}

// Begin opens a transaction. Begin inside one changes nothing (as
// PostgreSQL only warns).
func (s *Session) Begin() {
	if len(s.frames) == 0 {
		s.frames = append(s.frames, frame{})
	}
}

// Commit ends the transaction: what it made stays, except the
// transaction-scoped state (SET LOCAL, ON COMMIT DROP), which Ended
// lists. PREPARE TRANSACTION is a Commit for the session.
func (s *Session) Commit() Step {
	var st Step
	if len(s.frames) == 0 {
		return st
	}
	s.frames = nil
	st.end(s, func(h *Held) bool { return h.Local })
	return st
}

// Rollback ends the transaction and undoes it (see Session). Ended lists
// the state the transaction made that it undid, Restored the state it
// had ended that comes back.
func (s *Session) Rollback() Step {
	if len(s.frames) == 0 {
		return Step{}
	}
	st := s.undo(0)
	s.frames = nil
	return st
}

// Savepoint sets a savepoint. Outside a transaction it changes nothing
// (PostgreSQL refuses it).
func (s *Session) Savepoint(name string) {
	if len(s.frames) > 0 {
		s.frames = append(s.frames, frame{name: name})
	}
}

// savepoint returns the frame of the latest savepoint named name, or -1.
func (s *Session) savepoint(name string) int {
	for i := len(s.frames) - 1; i > 0; i-- {
		if s.frames[i].name == name {
			return i
		}
	}
	return -1
}

// Release releases a savepoint and the later ones: what they made and
// ended belongs to the frame around them.
func (s *Session) Release(name string) {
	i := s.savepoint(name)
	if i < 0 {
		return
	}
	f := &s.frames[i-1]
	for _, g := range s.frames[i:] {
		f.made = append(f.made, g.made...)
		f.ended = append(f.ended, g.ended...)
	}
	s.frames = s.frames[:i]
}

// RollbackTo undoes what was done since savepoint name, which stays set.
func (s *Session) RollbackTo(name string) Step {
	i := s.savepoint(name)
	if i < 0 {
		return Step{}
	}
	return s.undo(i)
}

// undo undoes frames i and later, which it leaves as frame i, empty.
func (s *Session) undo(i int) Step {
	var st Step
	made := map[*Held]bool{}
	var ended []*Held
	for _, f := range s.frames[i:] {
		for _, h := range f.made {
			made[h] = true
		}
		ended = append(ended, f.ended...)
	}
	s.frames = append(s.frames[:i], frame{name: s.frames[i].name})
	st.end(s, func(h *Held) bool { return made[h] && undoneMake(h.Kind) })
	// The frame is empty again: what the undo itself ended is no one's.
	s.frames[i].ended = nil
	for _, h := range ended {
		if !made[h] && !h.alive && undoneEnd(h.Kind) && !slices.Contains(st.Restored, h) {
			h.alive = true
			s.holds = append(s.holds, h)
			st.Restored = append(st.Restored, h)
		}
	}
	slices.SortFunc(s.holds, func(a, b *Held) int { return a.id - b.id })
	slices.SortFunc(st.Restored, func(a, b *Held) int { return a.id - b.id })
	return st
}

// undoneMake reports whether a rollback undoes the making of state of
// kind k; advisory locks, prepared statements and LOAD stay.
func undoneMake(k Kind) bool {
	switch k {
	case SetParam, SetRole, SessionAuth, Listen, CreateTemp, DeclareHold:
		return true
	}
	return false
}

// undoneEnd reports whether a rollback brings back state of kind k that
// the transaction ended; an unlock, a CLOSE and a DEALLOCATE stay done.
func undoneEnd(k Kind) bool {
	switch k {
	case SetParam, SetRole, SessionAuth, Listen, CreateTemp:
		return true
	}
	return false
}

// Control applies the transaction statement n: BEGIN, COMMIT, ROLLBACK
// (AND CHAIN), SAVEPOINT, RELEASE, ROLLBACK TO and PREPARE TRANSACTION
// (a Commit for the session). ok is false when n is not a transaction
// statement.
func (s *Session) Control(n *pg.Node) (st Step, ok bool) {
	t := n.GetTransactionStmt()
	if t == nil {
		return st, false
	}
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		s.Begin()
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT, pg.TransactionStmtKind_TRANS_STMT_PREPARE:
		st = s.Commit()
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		st = s.Rollback()
	case pg.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		s.Savepoint(t.SavepointName)
	case pg.TransactionStmtKind_TRANS_STMT_RELEASE:
		s.Release(t.SavepointName)
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		st = s.RollbackTo(t.SavepointName)
	}
	if t.Chain {
		s.Begin()
	}
	return st, true
}

// Found makes the state of kind k (Listen, CreateTemp, DeclareHold or
// Prepare) that the session holds exactly the names a server listed when
// its state was read (pg_listening_channels(), its temporary relations,
// pg_cursors, pg_prepared_statements): what the session did not know of
// is made, as by an effect of kind k of that name, and what the server
// no longer holds is forgotten. Only relations count among temporary
// objects: the server's list holds no others. It returns what it made
// and what it forgot.
func (s *Session) Found(k Kind, names []string) (made, forgot []*Held) {
	counts := func(h *Held) bool {
		return h.Kind == k && (k != CreateTemp || Namespace(h.Effect.Object) == "")
	}
	for _, n := range names {
		if !slices.ContainsFunc(s.holds, func(h *Held) bool { return counts(h) && h.Name == n }) {
			var st Step
			st.make(s, Effect{Kind: k, Name: n, Location: -1})
			made = append(made, st.Held)
		}
	}
	for _, h := range slices.Clone(s.holds) {
		if counts(h) && !slices.Contains(names, h.Name) {
			s.Forget(h)
			forgot = append(forgot, h)
		}
	}
	return made, forgot
}

// FoundLocks adjusts the advisory locks the session holds to the number
// of them a server listed (its rows of pg_locks, one per key and mode
// however many times it is held; a lock of a key known only at run time
// counts as a row of its own): none ends them all, more than the session
// knows of are locks whose keys it could not see, made with an unknown
// key. Fewer leave them: which ones went, only the server knows. It
// returns what it made and what it forgot.
func (s *Session) FoundLocks(n int) (made, forgot []*Held) {
	locks := s.FindKind(AdvisoryLock)
	if n == 0 {
		for _, h := range locks {
			s.Forget(h)
		}
		return nil, locks
	}
	rows := 0
	for i, h := range locks {
		again := func(x *Held) bool { return x.Effect.KeyKnown && sameLock(x.Effect, h.Effect) }
		if !h.Effect.KeyKnown || !slices.ContainsFunc(locks[:i], again) {
			rows++
		}
	}
	for i := rows; i < n; i++ {
		var st Step
		st.make(s, Effect{Kind: AdvisoryLock, Arg: "?", Location: -1})
		made = append(made, st.Held)
	}
	return made, nil
}
