package rules

import (
	"fmt"
	"strings"

	"github.com/pgpoolcheck/pgpoolcheck/internal/pgparams"
	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// Target names the pooler a team is switching to. Poolers differ in what
// they repair, so the same SQL is a bug behind one and harmless behind
// another.
type Target string

// The known targets.
const (
	Generic         Target = "generic"
	PgBouncer       Target = "pgbouncer"
	PgBouncerLegacy Target = "pgbouncer-legacy"
	PgDog           Target = "pgdog"
	RDSProxy        Target = "rds-proxy"
	PgPoolCheck     Target = "pgpoolcheck"
)

// Targets lists the known targets in documentation order.
var Targets = []Target{Generic, PgBouncer, PgBouncerLegacy, PgDog, RDSProxy, PgPoolCheck}

// DefaultTarget is the target when none is given.
const DefaultTarget = PgBouncer

// ParseTarget checks a target name.
func ParseTarget(name string) (Target, error) {
	for _, t := range Targets {
		if strings.EqualFold(name, string(t)) {
			return t, nil
		}
	}
	names := make([]string, len(Targets))
	for i, t := range Targets {
		names[i] = string(t)
	}
	return "", fmt.Errorf("unknown target %q (want one of %s)", name, strings.Join(names, ", "))
}

// Handling is what a pooler in transaction mode does about a kind of state.
type Handling int

// Handlings.
const (
	// Breaks: the state stays on the server connection. The client loses it
	// at its next transaction and the next client of that connection
	// inherits it.
	Breaks Handling = iota
	// Repairs: the pooler keeps the state per client and restores it on
	// whatever connection the client gets; nothing breaks.
	Repairs
	// Pins: the pooler keeps the client on one server connection while the
	// state exists; nothing breaks, but that client no longer shares its
	// connection.
	Pins
)

// Handle says what target t does about the session state that effects
// of kind k make or rely on, named by the kind that makes it (SetRole for
// roles, AdvisoryLock for advisory locks, CreateTemp for temporary
// objects, DeclareHold, Prepare, Load, Listen; CurrVal for sequences,
// DiscardAll for DISCARD, BackendIdentity), with a sentence for the
// finding's message. Parameters are HandleParam's.
func (t Target) Handle(k effects.Kind) (Handling, string) { return t.handle(k, false) }

// HandleParam is Handle for a change of run-time parameter name
// (lower-case): more targets repair the tracked ones (pgparams.Tracked),
// which PgBouncer and pgpoolcheck keep per client.
func (t Target) HandleParam(name string) (Handling, string) {
	return t.handle(effects.SetParam, pgparams.IsTracked(name))
}

func (t Target) handle(k effects.Kind, tracked bool) (Handling, string) {
	switch t {
	case PgBouncer, PgBouncerLegacy:
		switch {
		case tracked:
			return Repairs, "behind PgBouncer this parameter is restored per client (it is one of the six PgBouncer tracks)"
		case k == effects.BackendIdentity:
			return Breaks, "PgBouncer may run each transaction on a different server connection"
		}
		return Breaks, "PgBouncer does not reset server connections in transaction mode"
	case PgDog:
		switch k {
		case effects.SetParam:
			return Repairs, "PgDog intercepts SET and replays it on every server connection the client gets"
		case effects.AdvisoryLock:
			return Pins, "PgDog pins the client to its server while it holds an advisory lock, but a client that dies holding one leaves the lock on the pooled connection"
		case effects.Listen:
			return Repairs, "PgDog relays LISTEN/NOTIFY for its clients"
		case effects.BackendIdentity:
			return Breaks, "PgDog may run each transaction on a different server connection"
		}
		return Breaks, "PgDog hands the connection to other clients with this state still on it"
	case RDSProxy:
		switch k {
		case effects.BackendIdentity:
			return Breaks, "RDS Proxy may run each transaction on a different connection"
		}
		return Pins, "RDS Proxy pins the session: multiplexing is lost for this client until it disconnects"
	case PgPoolCheck:
		switch k {
		case effects.SetParam, effects.SetRole:
			return Repairs, "pgpoolcheck (--on-session-state preserve) replays it on every server connection the client gets and resets it before reuse"
		case effects.AdvisoryLock, effects.Listen, effects.CreateTemp, effects.DeclareHold, effects.Prepare, effects.Load:
			return Pins, "pgpoolcheck (--on-session-state preserve) pins the client to its server connection while the state exists and cleans it before reuse: nothing leaks, but the client stops sharing its connection meanwhile"
		case effects.DiscardAll:
			return Repairs, "pgpoolcheck resets connections itself"
		}
		return Breaks, "pgpoolcheck in transaction mode may run each transaction on another server connection"
	}
	return Breaks, "a transaction-mode pooler hands the server connection to another client after each transaction"
}

// Adjust lowers a base severity by how the target handles the state:
// repaired state is info, pinned state a warning.
func Adjust(base Severity, h Handling) Severity {
	switch h {
	case Repairs:
		return Info
	case Pins:
		if base > Warning {
			return Warning
		}
	}
	return base
}
