package traffic

// What analyze sees in the protocol itself rather than in SQL (startup
// parameters, named and unnamed prepared statements, idle transactions)
// becomes traffic events, which the catalogue's traffic rules judge.

import (
	"slices"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/capture"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// startup judges the startup parameters, in name order.
func (s *session) startup(ev *capture.Event) {
	names := make([]string, 0, len(ev.Params))
	for name := range ev.Params {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s.judge(&rules.TrafficEvent{Kind: rules.StartupParam, Name: name, Value: ev.Params[name]}, s.file, ev.Line, ev.T, nil)
	}
}

// judge runs the enabled traffic rules (Rule.Traffic) over an event that
// happened at file:line at time t. What they report becomes occurrences;
// complete gives each the statement the event concerns, which groups them
// unless the rule said what else does (TrafficFinding.Key).
func (s *session) judge(ev *rules.TrafficEvent, file string, line int, t int64, complete func(o *occurrence)) {
	pass := rules.NewTrafficPass(nil, s.a.cfg.JudgedTarget(), ev, func(f rules.TrafficFinding) {
		o := s.occurrence(f.Rule, f.Severity, file, line, t)
		o.msg, o.fix = f.Message, f.Fix
		if complete != nil {
			complete(&o)
		}
		if f.Key != "" {
			o.key = f.Key
		}
		s.a.add(o)
	})
	for _, r := range s.a.traffic {
		pass.Rule = r
		pass.Run()
	}
}

// clientActive ends an idle-in-transaction gap when the client speaks.
func (s *session) clientActive(ev *capture.Event) {
	if s.idleSince < 0 {
		return
	}
	s.idleGap(ev.T-s.idleSince, false)
	s.idleSince = -1
}

// clientGone ends an idle gap at the end of the session.
func (s *session) clientGone(t int64) {
	if s.idleSince >= 0 && t >= s.idleSince {
		s.idleGap(t-s.idleSince, true)
	}
	s.idleSince = -1
}

func (s *session) idleGap(d int64, untilEnd bool) {
	ev := &rules.TrafficEvent{Kind: rules.IdleTransaction, Idle: time.Duration(d), Threshold: s.a.opt.IdleThreshold, UntilEnd: untilEnd}
	s.judge(ev, s.idleFile, s.idleLine, s.idleSince, func(o *occurrence) {
		o.dur = ev.Idle
		if e := s.lastRun; e != nil {
			o.file, o.line, o.stmt, o.fp, o.key = e.file, e.line, e.p.text, e.p.fp, e.p.fp
			if o.key == "" {
				o.key = e.p.text
			}
		}
	})
}

// useStatement records a Bind or Describe of a prepared statement and
// returns its query string.
func (s *session) useStatement(name string, ev *capture.Event) string {
	if name == "" {
		u := s.unnamed
		if u.ok && u.sql != "" && u.tx < s.cur.num && ev.Kind == capture.Bind {
			s.judge(&rules.TrafficEvent{Kind: rules.UnnamedReuse}, u.file, u.line, ev.T, func(o *occurrence) {
				o.stmt, o.fp = u.sql, s.a.fingerprint(u.sql)
				o.key = o.fp
			})
		}
		return u.sql
	}
	ps, ok := s.named[name]
	if !ok {
		return ""
	}
	if ps.tx < s.cur.num {
		s.judge(&rules.TrafficEvent{Kind: rules.NamedReuse, Name: name}, ps.file, ps.line, ev.T, func(o *occurrence) {
			o.stmt, o.fp = ps.sql, s.a.fingerprint(ps.sql)
			o.key = o.fp
			if o.key == "" {
				o.key = ps.sql
			}
		})
		// Count it once per transaction of use.
		ps.tx = s.cur.num
		s.named[name] = ps
	}
	return ps.sql
}

// protocolDeallocate judges an SQL DEALLOCATE of a protocol-level
// statement (psycopg 3 with libpq before 17 evicts its statements so).
func (s *session) protocolDeallocate(name string, ps protoStmt, e *stmtRun) {
	ev := &rules.TrafficEvent{Kind: rules.ProtocolDeallocate, Name: name, SameTx: ps.tx >= s.cur.num}
	s.judge(ev, e.file, e.line, e.t, func(o *occurrence) {
		o.stmt, o.fp = e.p.text, e.p.fp
	})
}
