package engine

// Events and steps. A driver tells a client's engine what crossed the
// wire and does the step it gets back:
//
//	client message framed     Frame            relay, skip, terminate, violation
//	client message judged     Admit            send (with effects), send replaced, answer here
//	client message sent       Send             the client's pin, when it changed
//	server message            Server           forward or drop; then stay, verify, clean, release, lost
//	session state read back   Settle           stay, clean or release
//	server lost               ServerLost       whether the client needs the pooler's own error
//	client leaving            Vanish           nothing, queries to send, close, cancel and close
//	timer tick                Timeout          which timeout runs for the client
//
// The driver keeps the bytes, the sockets and the clock; the engine keeps
// the relay state, the policy and the prepared-statement tracking, and
// makes every decision on them.

// MaxClassified is the largest Query or Parse the engine reads whole to
// judge it; larger ones (bulk loads) pass unjudged.
const MaxClassified = 1 << 20

// Reads says what the engine reads of a client message of type typ with a
// body of n bytes before it is sent: look, what the driver's read buffer
// holds of it; whole, all of it (a message larger than the buffer is
// gathered first). The policy judges a whole statement; the tracking
// looks into Parse, Describe and Close whole, and into the start of a
// Bind or a Query (whether it is DEALLOCATE).
func (c *Client) Reads(typ byte, n int) (look, whole bool) {
	if c.Classifies(typ) && n <= MaxClassified {
		return true, true
	}
	if c.tracked {
		switch typ {
		case 'P', 'D', 'C':
			return true, true
		case 'B', 'Q':
			return true, false
		}
	}
	return false, false
}

// Admission is the policy's step for one client message (Admit).
type Admission struct {
	// Effects are what the message does to session state when it runs;
	// the driver hands them to Send with the message.
	Effects []StateEffect
	// Replace is a simple Query sent in the message's place (a refusal
	// the server raises, inside a transaction).
	Replace string
	// Reply, when set, answers the message here: the driver drops it and
	// sends Reply (the refusal and a ReadyForQuery).
	Reply []byte
}

// Classifies reports whether the policy judges a client message of type
// typ by what it does: the driver then runs the classifier on it and
// passes the effects to Admit.
func (c *Client) Classifies(typ byte) bool {
	return c.policyOn && (typ == 'Q' || typ == 'P')
}

// Admit judges the client's next message, of type typ, whose effects on
// session state are effs (the classifier's; nil when Classifies is
// false); attached says whether the client has a server now.
func (c *Client) Admit(typ byte, effs []StateEffect, attached bool) Admission {
	if !c.Classifies(typ) {
		return Admission{}
	}
	switch judge(c.policy, typ, effs, attached) {
	case Pass:
		return Admission{Effects: effs}
	case RefuseParse:
		// Answered among the Parse's responses (Send).
		c.rejectParse = Refusal(effs)
		return Admission{}
	case RaiseOnServer:
		return Admission{Replace: RaiseQuery(effs)}
	}
	return Admission{Reply: append(Refusal(effs), 'Z', 0, 0, 0, 5, 'I')}
}

// Send records a client message of type typ (body length n), admitted as
// a, as it goes to the attached server, and plans how it is sent. It
// counts in the relay state; its effects are applied under the client's
// policy (a tracked Parse's when its statement runs, at Bind); with
// tracking, srv is the server's and body what the driver holds of the
// message (Send), and ctr counts what tracking did. The plan's
// PinChanged says that the client's pin changed (to Pinned).
func (c *Client) Send(srv *Server, typ byte, body []byte, n int, a Admission, ctr *Counters) Plan {
	CountFrontend(&c.st, typ)
	effs := a.Effects
	if typ == 'P' && c.tracked {
		c.parseEffs, effs = effs, nil
	}
	var pl Plan
	pin, pinChanged := c.applyPin(effs)
	if c.tracked {
		pl = c.frontend(srv, typ, body, n, ctr)
		if p, changed := c.applyPin(pl.Effects); changed {
			pin, pinChanged = p, true
		}
	}
	pl.Pinned, pl.PinChanged = pin, pinChanged
	if a.Replace != "" {
		pl.Action, pl.Replace = PlanReplace, a.Replace
	}
	return pl
}

// applyPin applies effs and pins or unpins the attached server to match.
func (c *Client) applyPin(effs []StateEffect) (pinned, changed bool) {
	pinned, changed = c.applyEffects(effs)
	if changed {
		c.st.Pinned = pinned
	}
	return pinned, changed
}

// DefaultMaxOwed is how many answers a server may owe a tracked client
// before the client's next message waits for them (Limits.MaxOwed): each
// costs the tracking an
// entry, and a client that sends without reading would otherwise make the
// pooler keep one for every message the sockets' buffers hold. It must
// stay well above what PostgreSQL holds back unsent: it flushes its
// answers at a Sync or when its 8 KiB send buffer is full, and each
// answer takes at least 5 bytes, so up to about 1,640 answers may wait
// for more input. Below that bound a pipeline without Sync would wait for
// answers that never leave the server (tried with 64: pgx batches hung).
const DefaultMaxOwed = 16384

// Saturated reports whether the client's next message must wait until
// the server srv answered some of what it owes (Limits.MaxOwed).
func (c *Client) Saturated(srv *Server) bool {
	if !c.tracked {
		return false
	}
	max := DefaultMaxOwed
	if c.Limits != nil && c.Limits.MaxOwed > 0 {
		max = c.Limits.MaxOwed
	}
	return srv.q.len() >= max
}

// ServerMsg is one server message as the driver shows it to the engine:
// its type, its body length and, for the types SeesBody names, its body
// when the driver holds it whole (nil otherwise).
type ServerMsg struct {
	Type byte
	Len  int
	Body []byte
}

// SeesBody reports whether the engine reads the body of a server message
// of type typ: CommandComplete (the tracking's DEALLOCATE ALL and schema
// changes), ErrorResponse (FATAL; stale plans) and ReadyForQuery.
func SeesBody(typ byte) bool {
	return typ == 'C' || typ == 'E' || typ == 'Z'
}

// Then is what becomes of the attached server after a server message.
type Then uint8

const (
	// Stay: the server stays with the client; go on.
	Stay Then = iota
	// Lost: the server's stream cannot be trusted (a malformed
	// ReadyForQuery): close it and end the client (ServerLost).
	Lost
	// Verify: read what the client's routines left on the server
	// (Session.Unverified), then ask Settle.
	Verify
	// Clean: the server goes back to its pool once cleaned of the
	// client's session state (the clean plan of package pooler).
	Clean
	// Release: the server goes back to its pool now.
	Release
)

// ServerStep is the engine's step for one server message.
type ServerStep struct {
	// Forward: relay the message to the client; else drop it (the answer
	// to a Parse or Close the pooler sent itself).
	Forward bool
	Then    Then
	// Status is the transaction status of a ReadyForQuery that goes on
	// to the client; 0 for any other message (and for the answer to a
	// Sync the pooler sent itself).
	Status byte
	// Owed, with Stay at a ReadyForQuery, is the number of answers the
	// server still owes that the relay state had no count of: the
	// bookkeeping is off, and the server stays with this client rather
	// than reach another with answers that are not its own.
	Owed int
}

// Server takes one message from the attached server, whose tracking is
// srv (used when the client's statements are tracked); gone says that the
// client has left (its server is being cleaned after it).
func (c *Client) Server(srv *Server, m ServerMsg, gone bool) ServerStep {
	st := ServerStep{Forward: true}
	switch m.Type {
	case 'Z':
		if m.Len != 1 || len(m.Body) != 1 {
			return ServerStep{Then: Lost}
		}
	case 'E':
		if m.Body != nil && fatalError(m.Body) {
			c.st.Fatal = true
		}
	}
	if c.tracked && MayComplete(m.Type) {
		st.Forward = c.backend(srv, m.Type, m.Body)
	}
	if m.Type != 'Z' || !st.Forward {
		return st // not the client's ReadyForQuery: Status 0
	}
	st.Status = m.Body[0]
	c.ready(st.Status)
	if c.mustVerify(st.Status, gone) {
		// Statements whose effects only the server knows: they are
		// read before the server may go back to the pool, so that
		// what pins the client pins it now.
		st.Then = Verify
		return st
	}
	st.Then, st.Owed = c.Settle(srv)
	return st
}

// Settle decides, at a ReadyForQuery or once the server's state was read
// back after one (Verify), whether the attached server (tracking srv)
// goes back to its pool, and how. owed is as ServerStep.Owed.
func (c *Client) Settle(srv *Server) (then Then, owed int) {
	if c.tracked {
		owed = srv.Pending()
	}
	switch c.release(owed) {
	case Keep:
		return Stay, 0
	case KeepOwed:
		return Stay, owed
	}
	if c.mustClean() {
		return Clean, 0
	}
	return Release, 0
}

// ServerLost records that the attached server's stream ended or broke.
// explain says whether the client needs the pooler's own error: not when
// the server sent a FATAL before it went.
func (c *Client) ServerLost() (explain bool) {
	c.st.Broken = true
	return !c.st.Fatal
}

// fatalError reports whether an ErrorResponse body has severity FATAL or
// PANIC.
func fatalError(body []byte) bool {
	v := string(errorField(body, 'V'))
	return v == "FATAL" || v == "PANIC"
}

// TimeoutKind is the timeout that runs for a client.
type TimeoutKind uint8

const (
	NoTimeout TimeoutKind = iota
	// IdleTransactionTimeout: the client owes the next message inside a
	// transaction.
	IdleTransactionTimeout
	// QueryTimeout: the server owes an answer (PgBouncer's query_timeout
	// counts from the client's last message).
	QueryTimeout
	// ClientIdleTimeout: the client is idle between transactions.
	ClientIdleTimeout
)

// Timeout returns the timeout that runs for the client now; attached says
// whether it has a server, waiting whether it waits for one or is being
// closed (none of these runs then; a wait has the pool's limit).
func (c *Client) Timeout(attached, waiting bool) TimeoutKind {
	switch {
	case waiting:
		return NoTimeout
	case attached && IdleInTransaction(c.st):
		return IdleTransactionTimeout
	case attached && !Quiet(c.st):
		return QueryTimeout
	case !attached || Quiet(c.st) && c.st.TxStatus == 'I':
		return ClientIdleTimeout
	}
	return NoTimeout
}
