package rules

// Crossing is what analyze saw of the session state that a finding of an
// SQL rule stands for (a parameter set, a lock taken, a channel listened
// to, a temporary table, a cursor, a prepared statement) once the
// transaction that made it ended. Package analyzer/traffic follows the
// state; the rule's Crossed says whether what it saw is worth reporting
// and words the note the finding carries.
type Crossing struct {
	// LaterTx counts the later transactions the session ran while the
	// state existed.
	LaterTx int
	// Read is set when a later transaction read it (SHOW,
	// current_setting).
	Read bool
	// Used is set when a later transaction used it (the table, the
	// cursor, the prepared statement).
	Used bool
	// Released is set when a later transaction ended it (an unlock, an
	// UNLISTEN, a DROP).
	Released bool
	// Notified counts the notifications that arrived on its channel.
	Notified int
}

// crossedParam judges a parameter or role set for the session: it matters
// once the session ran another transaction.
func crossedParam(c Crossing) (string, bool) {
	switch {
	case c.LaterTx == 0:
		return "", false
	case c.Read:
		return "a later transaction read it (SHOW or current_setting)", true
	}
	return "the session ran later transactions, none of which read it back", true
}

// crossedLock judges a session-level advisory lock: still held when its
// transaction ended.
func crossedLock(c Crossing) (string, bool) {
	if c.Released {
		return "still held when its transaction ended, released in a later transaction", true
	}
	return "still held when its transaction ended, never released by the session", true
}

// crossedListen judges a LISTEN: the session listened past its
// transaction.
func crossedListen(c Crossing) (string, bool) {
	if c.Notified > 0 {
		return "notifications arrived after its transaction ended", true
	}
	return "listening after its transaction ended; no notification arrived", true
}

// crossedUse judges an object of the session (a temporary table, a WITH
// HOLD cursor, a prepared statement): it matters when a later transaction
// used it.
func crossedUse(c Crossing) (string, bool) {
	if !c.Used {
		return "", false
	}
	return "used in a later transaction", true
}
