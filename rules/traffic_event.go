package rules

import "time"

// TrafficEvent is something analyze saw in a client session that the
// traffic rules judge. Package analyzer/traffic follows the sessions of a
// capture and says what happened, across which transactions; a traffic
// rule's check says whether that is a problem behind the target, how
// severe, and why.
type TrafficEvent struct {
	Kind EventKind
	// Name is the startup parameter as the client sent it (StartupParam),
	// or the statement's name (NamedReuse, ProtocolDeallocate).
	Name string
	// Value is the startup parameter's value (StartupParam).
	Value string
	// SameTx is set when an SQL DEALLOCATE runs in the transaction that
	// parsed the statement (ProtocolDeallocate).
	SameTx bool
	// Idle is how long the client left its transaction open and idle,
	// Threshold how long it may (IdleTransaction); UntilEnd is set when
	// the session ended while idle.
	Idle, Threshold time.Duration
	UntilEnd        bool
}

// EventKind says what happened in a traffic event.
type EventKind int

// Kinds of traffic events.
const (
	// StartupParam: the client's StartupMessage carries a parameter.
	StartupParam EventKind = iota
	// NamedReuse: a named protocol-level statement parsed in an earlier
	// transaction is bound or described.
	NamedReuse
	// UnnamedReuse: the unnamed statement, parsed before a Sync that
	// ended the round trip outside a transaction, is bound after it.
	UnnamedReuse
	// ProtocolDeallocate: an SQL DEALLOCATE ends a protocol-level
	// statement.
	ProtocolDeallocate
	// IdleTransaction: the client left its transaction open and idle.
	IdleTransaction
)

// TrafficFinding is one problem a traffic rule found in an event.
type TrafficFinding struct {
	Rule     *Rule
	Severity Severity
	Message  string
	Fix      string
	// Key, when set, says what one finding stands for besides its rule
	// and severity (a parameter, a driver's statement names); otherwise
	// it is the statement the event concerns.
	Key string
}

// TrafficPass is one run of one traffic rule over one event.
type TrafficPass struct {
	Rule   *Rule
	Target Target
	Event  *TrafficEvent
	report func(TrafficFinding)
}

// NewTrafficPass prepares a run of r over ev; report receives the
// findings.
func NewTrafficPass(r *Rule, t Target, ev *TrafficEvent, report func(TrafficFinding)) *TrafficPass {
	return &TrafficPass{Rule: r, Target: t, Event: ev, report: report}
}

// Report records a finding. An empty fix means the rule's default fix; an
// empty key, the event's statement.
func (p *TrafficPass) Report(sev Severity, msg, fix, key string) {
	if fix == "" {
		fix = p.Rule.Fix
	}
	p.report(TrafficFinding{Rule: p.Rule, Severity: sev, Message: msg, Fix: fix, Key: key})
}

// Run runs the pass's rule.
func (p *TrafficPass) Run() { p.Rule.Traffic(p) }
