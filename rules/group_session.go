package rules

import "github.com/pgpoolcheck/pgpoolcheck/rules/effects"

// pairing is one run of a group's statements through an effects.Session,
// the one model of what a session holds: the rules ask it whether the
// state a statement made is ended later in the group (UNLISTEN, unlock,
// DROP, CLOSE, DEALLOCATE) instead of pairing statements themselves.
// Only the statements of one transaction share a server connection, so
// in a group that is not one (Explicit) nothing pairs.
type pairing struct {
	// steps are the steps of the Changes of each statement, in order.
	steps [][]effects.Step
	// madeAt and endedAt are the statements that made and ended each
	// piece of state (endedAt only when it was ended and stayed so).
	madeAt, endedAt map[*effects.Held]int
	// replacedBy is the later SET of the same parameter (or role) that
	// ended a SET.
	replacedBy map[*effects.Held]*effects.Held
	explicit   bool
}

// pairing runs the group through a session once.
func (g *Group) pairing() *pairing {
	if g.pairs != nil {
		return g.pairs
	}
	p := &pairing{steps: make([][]effects.Step, len(g.Stmts)), madeAt: map[*effects.Held]int{}, endedAt: map[*effects.Held]int{},
		replacedBy: map[*effects.Held]*effects.Held{}, explicit: g.Explicit}
	g.pairs = p
	var s effects.Session
	if g.Explicit {
		s.Begin()
	}
	note := func(i int, step effects.Step) {
		if step.Held != nil && step.New {
			p.madeAt[step.Held] = i
		}
		for _, h := range step.Ended {
			p.endedAt[h] = i
			if n := step.Held; n != nil && n.Kind == h.Kind && n.Name == h.Name {
				p.replacedBy[h] = n
			}
		}
		for _, h := range step.Restored {
			delete(p.endedAt, h)
		}
	}
	for i, st := range g.Stmts {
		if st.Node == nil {
			continue
		}
		if g.Explicit && g.Body == "" {
			// A routine body's COMMIT keeps its server connection: what
			// bodyTxEnd says of it is the rules' own.
			if step, ok := s.Control(st.Node); ok {
				note(i, step)
				continue
			}
		}
		for _, e := range st.Changes() {
			if !g.Explicit {
				s = effects.Session{}
			}
			step := s.Apply(e)
			p.steps[i] = append(p.steps[i], step)
			note(i, step)
		}
	}
	return p
}

// endedAfter reports whether the state h is ended by a statement after
// the i-th, and by which.
func (p *pairing) endedAfter(h *effects.Held, i int) (int, bool) {
	k, ok := p.endedAt[h]
	return k, ok && k > i && h != nil
}

// stepOf returns the step of the j-th change of statement i.
func (p *pairing) stepOf(i, j int) effects.Step { return p.steps[i][j] }

// holds reports whether the group holds state of kind k named name when
// its i-th statement starts: made before it and not ended before it.
func (p *pairing) holds(k effects.Kind, name string, i int) bool {
	if !p.explicit {
		return false // each statement runs on a connection of its own
	}
	for h, m := range p.madeAt {
		if h.Kind != k || h.Name != name || m >= i {
			continue
		}
		if e, ended := p.endedAt[h]; !ended || e >= i {
			return true
		}
	}
	return false
}

// resetAfter reports whether the parameter or role set by the j-th change
// of statement i is put back to its default later in the group (RESET,
// RESET ALL, SET … TO DEFAULT, SET ROLE NONE, or SET SESSION
// AUTHORIZATION for the role), after any later SETs of the same name
// that replace it: a change undone in the transaction that made it never
// reaches the pool.
func (p *pairing) resetAfter(i, j int) bool {
	h := p.stepOf(i, j).Held
	for h != nil {
		if n := p.replacedBy[h]; n != nil {
			h = n
			continue
		}
		_, ok := p.endedAfter(h, i)
		return ok
	}
	return false
}
