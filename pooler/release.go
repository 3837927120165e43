package pooler

// relState is what the relay knows about an attached server connection's
// protocol state. Only the client goroutine raises the counters (before the
// bytes reach the server) and only the server pump lowers them, both under
// clientConn.mu.
type relState struct {
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
	// (set by the session-state policies; never set by the core yet).
	Pinned bool
	// Broken marks a server whose stream can no longer be trusted.
	Broken bool
}

// mayRelease reports whether a server in state s may go back to the pool:
// it must be outside any transaction, owe the client nothing and hold
// nothing of the client's.
func mayRelease(s relState) bool {
	return !s.Broken && !s.HeldForSession && !s.Pinned &&
		s.TxStatus == 'I' && s.PendingSyncs == 0 && !s.Unsynced
}

// vanishAction is what to do with a server whose client went away.
type vanishAction int

const (
	// vanishNothing: no server attached.
	vanishNothing vanishAction = iota
	// vanishReset: idle between transactions; send the reset (DISCARD ALL
	// in session mode, nothing in transaction mode) and release.
	vanishReset
	// vanishRollback: idle inside a transaction; ROLLBACK, then release.
	vanishRollback
	// vanishCancelClose: a query is running; cancel it and close the
	// server, since PostgreSQL would otherwise run it to the end.
	vanishCancelClose
	// vanishClose: an unfinished extended query or a broken stream; close.
	vanishClose
)

// onVanish decides what happens to the attached server (attached tells
// whether there is one) when its client disconnects in state s.
func onVanish(attached bool, s relState) vanishAction {
	switch {
	case !attached:
		return vanishNothing
	case s.Broken:
		return vanishClose
	case s.PendingSyncs > 0:
		return vanishCancelClose
	case s.Unsynced:
		return vanishClose
	case s.TxStatus == 'I':
		return vanishReset
	default:
		return vanishRollback
	}
}

// countFrontend updates s for a client message of type typ about to be sent
// to the server.
func countFrontend(s *relState, typ byte) {
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
