package engine

// The relay state of a client's attached server, kept by the client's
// engine and changed only by the events of events.go and the methods
// below. The session-state policy is the client's from its login
// (SetPolicy), so every decision about one client is made against the
// same policy, whatever a RELOAD changes.

// SetPolicy gives the client the session-state policy it keeps for its
// life; on says whether the policy applies at all (transaction mode with
// a classifier), tracked whether its prepared statements are tracked
// (transaction mode with max_prepared_statements).
func (c *Client) SetPolicy(p Policy, on, tracked bool) {
	c.policy, c.policyOn, c.tracked = p, on, tracked
}

// Tracked reports whether the client's prepared statements are tracked.
func (c *Client) Tracked() bool { return c.tracked }

// Policy returns the client's session-state policy.
func (c *Client) Policy() Policy { return c.policy }

// PolicyOn reports whether the client's session state is classified and
// judged (transaction mode with a classifier).
func (c *Client) PolicyOn() bool { return c.policyOn }

// State returns the relay state of the attached server.
func (c *Client) State() RelState { return c.st }

// Attached starts the relay state of a server just attached to the
// client; session is set in session and record mode, where the client
// keeps it until it leaves.
func (c *Client) Attached(session bool) {
	c.st = RelState{TxStatus: 'I', HeldForSession: session}
	c.fresh = true
}

// ready records a ReadyForQuery with the given status from the server.
func (c *Client) ready(status byte) {
	c.st.TxStatus = status
	if c.st.PendingSyncs > 0 {
		c.st.PendingSyncs--
	}
}

// Broke marks the server's stream as no longer trusted: it is closed, not
// released.
func (c *Client) Broke() { c.st.Broken = true }

// Verified records the read of the attached server's session state
// (Verify): ok says it was read, and then what it holds pins the client
// or not; a state not read keeps the client on its server. It returns
// the pin, which the driver shows in the client's place.
func (c *Client) Verified(ok bool) (pinned bool) {
	c.st.Pinned = !ok || c.Session.Held()
	return c.st.Pinned
}

// ReleaseVerdict is what happens to the attached server after a
// ReadyForQuery.
type ReleaseVerdict uint8

const (
	// Keep: the server stays with the client (a transaction, a pin, an
	// answer still owed).
	Keep ReleaseVerdict = iota
	// ReleaseNow: the server goes back to its pool.
	ReleaseNow
	// KeepOwed: the relay state allows a release but the server still
	// owes responses the prepared-statement tracking expects: the
	// bookkeeping is off, and the server stays with this client rather
	// than reach another with answers that are not its own.
	KeepOwed
)

// release decides, after a ReadyForQuery, whether the attached server goes
// back to its pool; owed is the number of responses the server still owes
// (Server.Pending; 0 without prepared-statement tracking).
func (c *Client) release(owed int) ReleaseVerdict {
	switch {
	case !MayRelease(c.st):
		return Keep
	case owed > 0:
		return KeepOwed
	}
	return ReleaseNow
}

// mustVerify reports whether, after a ReadyForQuery with status, the
// server's session state must be read before it may go back to the pool:
// under preserve, once the client ran statements whose effects only the
// server knows (routines), so that what pins the client pins it before
// anyone else could get the server. gone says the client has left.
func (c *Client) mustVerify(status byte, gone bool) bool {
	return c.policyOn && c.policy == PolicyPreserve && status == 'I' && !gone &&
		c.Session.Unverified() && Quiet(c.st)
}

// mustClean reports whether the attached server carries session state of
// the client's that must be taken off (a round trip or more) before it
// goes back to the pool.
func (c *Client) mustClean() bool { return c.policyOn && c.Session.Dirty() }

// VanishPlan is what becomes of the attached server when its client
// leaves: the action, and for VanishReset the queries to send before the
// server is released at their last ReadyForQuery.
type VanishPlan struct {
	Action  VanishAction
	Queries []string
}

// Vanish plans what happens to the attached server (attached says whether
// there is one) when the client leaves, and updates the relay state for
// it: the queries it plans are counted as sent, and srv (the server's
// prepared-statement tracking, nil without it) expects their answers.
func (c *Client) Vanish(attached bool, srv *Server) VanishPlan {
	act := OnVanish(attached, c.st)
	pl := VanishPlan{Action: act}
	c.DropStatements()
	switch act {
	case VanishNothing:
	case VanishReset:
		c.st.Pinned = false // the server is cleaned at its release
		if c.st.HeldForSession {
			pl.Queries = append(pl.Queries, "DISCARD ALL")
		}
		if len(pl.Queries) == 0 {
			pl.Queries = append(pl.Queries, "") // an empty query, for a ReadyForQuery
		}
		c.st.HeldForSession = false
		c.st.PendingSyncs += len(pl.Queries)
		if srv != nil {
			for range pl.Queries {
				srv.ExpectQuery()
			}
		}
	default:
		c.st.Broken = true
	}
	return pl
}
