// Package effects is the one model of what a statement does to server
// session state and of what it reads of it. It says, for one parsed
// statement (Stmt), one query string (Query) or one routine definition
// (Routine): sets or resets of run-time parameters (session or
// transaction scoped), role changes, session advisory locks taken and
// released, LISTEN/UNLISTEN, temporary objects created and dropped,
// WITH HOLD cursors, SQL-level PREPARE/DEALLOCATE, LOAD, DISCARD, calls
// of routines that are not built in and DO blocks (whose effects the text
// does not show), and what is read: parameters, cursors, prepared
// statements, sequences, relations that may be temporary, the backend's
// identity, and how a transaction ends.
//
// Session accumulates what a server session holds over those effects and
// the transactions around them: the pairing rules (RESET, the unlocks,
// UNLISTEN, DROP, CLOSE, DEALLOCATE, DISCARD, ROLLBACK and savepoints,
// SET LOCAL) are written there once. The SQL rules run each transaction
// through it, the traffic analysis each captured session, and the
// pooler's engine what each client left on its server (Strict).
//
// Everything that judges statements consults it: the SQL rules (package
// rules, fed per statement through rules.Stmt), the traffic analysis
// (package analyzer), the pooler's classifier (package rules/classify,
// through internal/sessionstate), whose effects the pooler's engine
// follows by their Kind (package pooler/engine), and the pooler's
// analysis of routine bodies (Routine); scan's following of calls uses
// UserCalls. The words of text that tell whether a statement can matter
// before any parse are listed here once (Keywords), for the pooler's
// pre-filter and scan's. What is a hazard, and what a pooler or a policy
// does about it, is decided by those callers, never here. The package
// imports only the parser wrapper.
package effects

import "strconv"

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
	// RoutineChange changes what code statements can run: it creates,
	// replaces, alters or drops a function or procedure, a schema or an
	// extension, or an object that runs routines without the statement
	// naming them (a view, rule, trigger, policy, table with defaults or
	// constraints, domain, type, operator, cast, index, event trigger).
	// What the pooler learned of routines (Routine) and of what reaches
	// them may be out of date.
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
	// SetVal is setval(Arg, …), which also sets what currval returns.
	SetVal
	// BackendIdentity reads the identity of the server process or of its
	// client: pg_backend_pid(), inet_client_addr(), inet_client_port()
	// (Func).
	BackendIdentity
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
	SetVal: "setval", BackendIdentity: "backend-identity",
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
	// Via is the form of the statement or call that has the effect.
	Via Via
	// Func is the built-in function whose call has the effect (advisory
	// lock functions, set_config, the sequence functions, the backend
	// identity functions), lower-case; empty for statements.
	Func string
	// Raw is the value as the statement gives it when it is one string
	// constant: the role of SET ROLE and set_config('role', …), the
	// sequence name of currval('…'). Empty otherwise.
	Raw string
	// MaybeLocal marks set_config(…, is_local) whose is_local is only
	// known at run time: the effect is reported session-scoped (Local is
	// false), and lasts for the session only when is_local is false.
	MaybeLocal bool
	// DeleteRows marks a temporary table created ON COMMIT DELETE ROWS: it
	// loses its rows at COMMIT and lives until the session ends.
	DeleteRows bool
	// Location is the byte offset in the statement's text of the node
	// the effect comes from (a call, a relation), or -1 when it is the
	// whole statement.
	Location int32
}

// Via is the form of the statement or call that has an effect.
type Via uint8

// Forms of statements and calls.
const (
	ViaStatement       Via = iota // the statement itself (LISTEN, PREPARE, …)
	ViaSet                        // SET name TO value, SET ROLE NONE
	ViaSetDefault                 // SET name TO DEFAULT
	ViaReset                      // RESET name, RESET ALL
	ViaCharacteristics            // SET SESSION CHARACTERISTICS AS TRANSACTION
	ViaSetConfig                  // set_config(name, value, is_local)
	ViaPgSettings                 // UPDATE pg_settings
	ViaCall                       // a call of a function (Func)
)
