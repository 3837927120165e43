package engine

// RelState is what the relay knows about an attached server connection's
// protocol state. The client's messages raise the counters before their
// bytes reach the server and the server's answers lower them; the client's
// owner alone uses it.
type RelState struct {
	// TxStatus is the status of the last ReadyForQuery: 'I' idle, 'T' in a
	// transaction, 'E' in a failed transaction.
	TxStatus byte
	// PendingSyncs counts messages sent whose ReadyForQuery has not arrived
	// yet: simple Query, Sync and FunctionCall each produce exactly one.
	PendingSyncs int
	// Unsynced is set by extended-protocol messages (Parse, Bind, Describe,
	// Execute, Close, Flush) and cleared by Sync: the server holds an
	// unfinished extended query (and a Flush may still be producing
	// responses), so it belongs to this client until the Sync.
	Unsynced bool
	// HeldForSession is set in session and record mode while the client is
	// connected.
	HeldForSession bool
	// Pinned keeps the server for session state the pooler cannot move
	// (set by the preserve policy).
	Pinned bool
	// Broken marks a server whose stream can no longer be trusted.
	Broken bool
	// Fatal is set once the server sent a FATAL (or PANIC) error: when
	// its stream ends, the client has the server's own explanation.
	Fatal bool
}

// MayRelease reports whether a server in state s may go back to the pool:
// it must be outside any transaction, owe the client nothing and hold
// nothing of the client's.
func MayRelease(s RelState) bool {
	return !s.Broken && !s.HeldForSession && !s.Pinned &&
		s.TxStatus == 'I' && s.PendingSyncs == 0 && !s.Unsynced
}

// VanishAction is what to do with a server whose client went away.
type VanishAction int

const (
	// VanishNothing: no server attached.
	VanishNothing VanishAction = iota
	// VanishReset: idle between transactions; send the reset (DISCARD ALL
	// in session mode, nothing in transaction mode) and release.
	VanishReset
	// VanishCancelClose: a query is running; cancel it and close the
	// server, since PostgreSQL would otherwise run it to the end.
	VanishCancelClose
	// VanishClose: an unfinished extended query, a broken stream, or a
	// client that left inside a transaction (status T or E); close.
	VanishClose
)

// OnVanish decides what happens to the attached server (attached tells
// whether there is one) when its client disconnects in state s.
func OnVanish(attached bool, s RelState) VanishAction {
	switch {
	case !attached:
		return VanishNothing
	case s.Broken:
		return VanishClose
	case s.PendingSyncs > 0:
		return VanishCancelClose
	case s.Unsynced:
		return VanishClose
	case s.TxStatus == 'I':
		return VanishReset
	default:
		// The client left inside a transaction. Without the pooler its
		// backend would end with it, and so does this server, in every
		// mode: a ROLLBACK would not undo what the transaction did to
		// the session outside it (protocol statements prepared against
		// types or tables it created or dropped, which the rollback
		// leaves planned against objects that no longer exist, and which
		// other clients share), and in session mode the next client gets
		// another backend (with another process ID, which clients such
		// as pgxpool check). The cost is a server login per such client.
		return VanishClose
	}
}

// CountFrontend updates s for a client message of type typ about to be sent
// to the server.
func CountFrontend(s *RelState, typ byte) {
	switch typ {
	case 'Q', 'F':
		s.PendingSyncs++
	case 'S':
		s.PendingSyncs++
		s.Unsynced = false
	case 'P', 'B', 'D', 'E', 'C', 'H':
		s.Unsynced = true
	}
}

// IdleInTransaction reports whether a server in state s waits for its
// client inside a transaction: the client owes the next message and has
// an open (or failed) transaction on it.
func IdleInTransaction(s RelState) bool {
	return (s.TxStatus == 'T' || s.TxStatus == 'E') && s.PendingSyncs == 0 && !s.Unsynced
}

// Quiet reports whether nothing is under way on a server in state s: no
// response is owed and no extended query is unfinished.
func Quiet(s RelState) bool {
	return s.PendingSyncs == 0 && !s.Unsynced
}
