// Package classify is the one model of what a statement does to server
// session state: sets or resets a parameter, changes the role, takes or
// releases a session advisory lock, LISTEN/UNLISTEN, creates or drops
// temporary objects, declares or closes a WITH HOLD cursor, SQL-level
// PREPARE/DEALLOCATE, LOAD, DISCARD, and whether it runs code whose
// effects its text does not show (a DO block, a call of a user routine);
// and of what it reads of that state (Statement). The pooler's classifier
// (Classify), the traffic analysis (analyzer, through Statement) and the
// pooler's analysis of routine bodies (Routine) all consult it.
//
// Classify is built for the pooler's hot path. A statement goes through
// three steps, each cheaper than the next:
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
//  3. The PostgreSQL parser (pg_query) and a walk of the tree.
//
// The rule catalogue decides what a hazard is; this package only reports
// effects and names the rule (Effect.Rule) that covers each one. It imports
// the rules package and the parser wrapper, never the pooler.
package classify

import (
	"strconv"
	"strings"
)

// Names of CallRoutine effects of DO blocks: the statements of a DO
// block's body are analyzed with it, except for an opaque one (another
// language, a body that does not compile, dynamic SQL), which may do
// anything.
const (
	DOBlock       = "DO"
	OpaqueDOBlock = "DO (opaque)"
)

// Kind is what a statement does to session state.
type Kind uint8

// Kinds of effects. Name and the other Effect fields are described with
// each kind.
const (
	// SetParam sets run-time parameter Name to Value: SET, SET SESSION,
	// set_config(Name, value, false), UPDATE pg_settings, SET SESSION
	// CHARACTERISTICS AS TRANSACTION (one effect per default_transaction_*
	// parameter). With Local it is SET LOCAL or set_config(…, true), which
	// ends with the transaction.
	SetParam Kind = iota + 1
	// ResetParam puts parameter Name back to its default: RESET Name or
	// SET Name TO DEFAULT.
	ResetParam
	// ResetAll is RESET ALL. It resets neither the role nor the session
	// authorization.
	ResetAll
	// SetRole is SET ROLE Value or set_config('role', Value, false).
	SetRole
	// ResetRole is RESET ROLE, SET ROLE NONE or SET ROLE DEFAULT.
	ResetRole
	// SessionAuth is SET SESSION AUTHORIZATION Value; it also resets the
	// role.
	SessionAuth
	// ResetSessionAuth is RESET SESSION AUTHORIZATION or SET SESSION
	// AUTHORIZATION DEFAULT.
	ResetSessionAuth
	// AdvisoryLock takes a session-level advisory lock: pg_advisory_lock,
	// pg_try_advisory_lock (Try: held only if the call returned true) and
	// their _shared forms (Shared). See Effect.Key for the key.
	AdvisoryLock
	// AdvisoryUnlock releases one: pg_advisory_unlock[_shared].
	AdvisoryUnlock
	// AdvisoryUnlockAll is pg_advisory_unlock_all().
	AdvisoryUnlockAll
	// Listen is LISTEN Name.
	Listen
	// Unlisten is UNLISTEN Name.
	Unlisten
	// UnlistenAll is UNLISTEN *.
	UnlistenAll
	// CreateTemp creates temporary object Name: CREATE TEMP TABLE / VIEW /
	// SEQUENCE, CREATE TEMP TABLE … AS, SELECT … INTO TEMP, objects
	// created in schema pg_temp. Local marks ON COMMIT DROP (gone at the
	// end of the transaction). Object says what kind of object ("table",
	// "view", "sequence", "function", …).
	CreateTemp
	// DropTemp is DROP TABLE / VIEW / SEQUENCE Name, unqualified or in
	// pg_temp: the pooler knows which names it saw created as temporary.
	DropTemp
	// DeclareHold is DECLARE Name CURSOR WITH HOLD.
	DeclareHold
	// CloseCursor is CLOSE Name.
	CloseCursor
	// CloseAll is CLOSE ALL.
	CloseAll
	// Prepare is SQL-level PREPARE Name (not PREPARE TRANSACTION).
	Prepare
	// Deallocate is DEALLOCATE [PREPARE] Name.
	Deallocate
	// DeallocateAll is DEALLOCATE ALL.
	DeallocateAll
	// Load is LOAD Name (the library file name).
	Load
	// DiscardAll is DISCARD ALL.
	DiscardAll
	// DiscardTemp is DISCARD TEMP.
	DiscardTemp
	// DiscardPlans is DISCARD PLANS.
	DiscardPlans
	// DiscardSequences is DISCARD SEQUENCES.
	DiscardSequences
	// CallRoutine runs code whose effects the text does not show: a DO
	// block (Name DOBlock, or OpaqueDOBlock when what it does cannot be
	// read from its text) or a call of a function or procedure that is not
	// built in (Name is the name as written, schema-qualified or not).
	// What it did is only known to the server, which the pooler reads.
	CallRoutine
	// RoutineChange creates, replaces, alters or drops a function or
	// procedure (or a schema, which may hold them): what the pooler
	// learned of routines (Routine) may be out of date.
	RoutineChange

	// The kinds below only read session state or end a transaction; only
	// Statement reports them (the traffic analysis follows what is read
	// across transactions), never Classify.

	// ReadParam reads parameter Name: SHOW Name, current_setting('Name').
	ReadParam
	// UseCursor is FETCH or MOVE of cursor Name (CLOSE Name is
	// CloseCursor).
	UseCursor
	// ExecutePrepared is EXECUTE Name of an SQL prepared statement.
	ExecutePrepared
	// NextVal is nextval(Arg); CurrVal is currval(Arg); LastVal is
	// lastval().
	NextVal
	CurrVal
	LastVal
	// Relation names relation Name, unqualified or in pg_temp: a temporary
	// one if the session made one of that name.
	Relation
	// Insert is an INSERT, whose column defaults may call nextval().
	Insert
	// TxEnd ends the transaction: COMMIT, ROLLBACK, ABORT or PREPARE
	// TRANSACTION without AND CHAIN.
	TxEnd
	// TxRollback is ROLLBACK or ABORT (not TO SAVEPOINT).
	TxRollback
	// TxRollbackTo is ROLLBACK TO SAVEPOINT: the transaction goes on after
	// an error.
	TxRollbackTo
)

var kindNames = [...]string{
	SetParam: "set-param", ResetParam: "reset-param", ResetAll: "reset-all",
	SetRole: "set-role", ResetRole: "reset-role", SessionAuth: "session-auth", ResetSessionAuth: "reset-session-auth",
	AdvisoryLock: "advisory-lock", AdvisoryUnlock: "advisory-unlock", AdvisoryUnlockAll: "advisory-unlock-all",
	Listen: "listen", Unlisten: "unlisten", UnlistenAll: "unlisten-all",
	CreateTemp: "create-temp", DropTemp: "drop-temp",
	DeclareHold: "declare-hold", CloseCursor: "close-cursor", CloseAll: "close-all",
	Prepare: "prepare", Deallocate: "deallocate", DeallocateAll: "deallocate-all",
	Load:       "load",
	DiscardAll: "discard-all", DiscardTemp: "discard-temp", DiscardPlans: "discard-plans", DiscardSequences: "discard-sequences",
	CallRoutine: "call-routine", RoutineChange: "routine-change",
	ReadParam: "read-param", UseCursor: "use-cursor", ExecutePrepared: "execute-prepared",
	NextVal: "nextval", CurrVal: "currval", LastVal: "lastval", Relation: "relation", Insert: "insert",
	TxEnd: "tx-end", TxRollback: "tx-rollback", TxRollbackTo: "tx-rollback-to",
}

// String returns the kind's kebab-case name, for logs.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Effect is one thing a statement does to session state.
type Effect struct {
	Kind Kind
	// Name is the parameter (lower-case, as PostgreSQL folds it: "timezone"
	// for SET TIME ZONE, "search_path" for SET SCHEMA), channel, cursor,
	// prepared statement, temporary object or library. Empty when only
	// known at run time (see Dynamic).
	Name string
	// Value is the new value of SetParam, SetRole and SessionAuth as SQL
	// text that reproduces it after "SET <Name> TO ": '64MB', "$user",
	// public. Empty when it cannot be given exactly (a run-time value, or
	// an expression that set_config would read differently from SET).
	Value string
	// Object is the kind of object of CreateTemp ("table", "view", …).
	Object string
	// Local marks transaction-scoped forms: SET LOCAL, set_config(…, true),
	// a temporary table with ON COMMIT DROP. They leave no state behind
	// the transaction.
	Local bool
	// Dynamic marks effects whose name, value or scope depend on values
	// only known at run time ($1 parameters, expressions, dynamic SQL in
	// a DO block). They are reported in their session-scoped form.
	Dynamic bool
	// Key is the advisory lock key when KeyKnown. The two-int4 form
	// pg_advisory_lock(a, b) is encoded as int64(a)<<32 | int64(uint32(b))
	// with Pair set: PostgreSQL keeps the one-bigint and the two-int4 key
	// spaces apart, so compare Pair too.
	Key      int64
	KeyKnown bool
	Pair     bool
	// Shared marks the _shared advisory lock functions.
	Shared bool
	// Try marks pg_try_advisory_lock*: the lock is held only when the call
	// returned true, which the pooler does not see.
	Try bool
	// Arg renders the argument of an advisory lock function (the key:
	// "12", "1,2" for the two-int4 form) or of nextval and currval for
	// pairing statements: a constant, a query parameter ("$1"), or "?".
	Arg string
	// Rule is the id of the catalogue rule that covers the effect
	// ("session-set", "advisory-lock-session", …).
	Rule string
}

// Result is what one query string does to session state.
type Result struct {
	// Effects lists the effects of every statement of the string, in
	// order. It is shared with the cache: callers must not modify it.
	Effects []Effect
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

// Classify classifies sql without a cache.
func Classify(sql string) Result {
	if !mayAffect(sql, nil) {
		return Result{}
	}
	return classify(sql)
}
