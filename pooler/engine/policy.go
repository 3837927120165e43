package engine

import "fmt"

// Policy is what the pooler does with session state in transaction mode
// (--on-session-state).
type Policy string

// Policies.
const (
	// PolicyPreserve: the client's settings follow it to whichever server
	// it gets; other state pins it to its server until the state is gone.
	PolicyPreserve Policy = "preserve"
	// PolicyReset: nothing follows the client; its server is cleaned of
	// what it changed before it goes back to the pool.
	PolicyReset Policy = "reset"
	// PolicyReject: statements that change session state are refused.
	PolicyReject Policy = "reject"
	// PolicyAllow: passed through, as PgBouncer does.
	PolicyAllow Policy = "allow"
)

// Verdict is what the policy makes of a client's statement.
type Verdict uint8

const (
	// Pass: send the statement; its effects are applied when it runs
	// (Send).
	Pass Verdict = iota
	// RefuseNow: a Query between transactions is answered with Refusal
	// and ReadyForQuery 'I' and not sent.
	RefuseNow
	// RaiseOnServer: inside a transaction, RaiseQuery is sent instead, so
	// that the server fails the transaction as it would for an error.
	RaiseOnServer
	// RefuseParse: a Parse is answered with Refusal in its place among
	// the responses (Admit, Send).
	RefuseParse
)

// judge decides what happens to a Query ('Q') or Parse ('P') whose
// effects on session state are effs, under policy p; attached says
// whether the client has a server (it is inside a transaction).
func judge(p Policy, typ byte, effs []StateEffect, attached bool) Verdict {
	if p != PolicyReject || !makesState(effs) {
		return Pass
	}
	switch {
	case typ == 'P':
		return RefuseParse
	case attached:
		return RaiseOnServer
	}
	return RefuseNow
}

// refused is the effect a refusal names: the first that makes state.
func refused(effs []StateEffect) StateEffect {
	for _, e := range effs {
		if Makes(e.Kind) {
			return e
		}
	}
	return effs[0]
}

// makesState reports whether any of effs makes session state (Makes).
func makesState(effs []StateEffect) bool {
	for _, e := range effs {
		if Makes(e.Kind) {
			return true
		}
	}
	return false
}

// applyEffects records effs, which the client's statement had on its
// server, under the client's policy. It reports whether the policy keeps
// the state (changed) and, if so, whether the client's server is now
// pinned to it.
func (c *Client) applyEffects(effs []StateEffect) (pinned, changed bool) {
	if len(effs) == 0 || c.policy == PolicyAllow {
		return false, false
	}
	if effs = c.resolveReach(effs); len(effs) == 0 {
		return false, false
	}
	c.Session.Apply(effs, IsTracked)
	if c.policy != PolicyPreserve {
		return false, false
	}
	return c.Session.Held(), true
}

func refusalText(e StateEffect) string {
	return fmt.Sprintf("pgpoolcheck refuses this statement in transaction pooling: it changes session state that would leak to other clients (rule %s)", e.Rule)
}

// Refusal is the ErrorResponse (SQLSTATE 0A000) that refuses a statement
// with effects effs under the reject policy, with the rule's fix as hint.
func Refusal(effs []StateEffect) []byte {
	e := refused(effs)
	return ErrorResponse("ERROR", "0A000", refusalText(e), e.Fix)
}

// RaiseQuery is a simple Query that makes the server raise the refusal
// itself, so that a transaction in progress fails as PostgreSQL would fail
// it.
func RaiseQuery(effs []StateEffect) string {
	e := refused(effs)
	q := "DO $pgpoolcheck$BEGIN RAISE EXCEPTION USING ERRCODE = '0A000', MESSAGE = " + QuoteLiteral(refusalText(e))
	if e.Fix != "" {
		q += ", HINT = " + QuoteLiteral(e.Fix)
	}
	return q + "; END$pgpoolcheck$"
}
