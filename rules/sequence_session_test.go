package rules_test

import (
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/internal/sqlparse"
	"github.com/pgpoolcheck/pgpoolcheck/rules"
)

// TestSequenceSessionGroups checks when a currval() or lastval() has its
// nextval() in the same transaction, by the kind of group it runs in.
func TestSequenceSessionGroups(t *testing.T) {
	for _, tt := range []struct {
		name  string
		sql   string
		group rules.Group
		want  int // findings
	}{
		{"alone", "SELECT lastval()", rules.Group{}, 1},
		{"after an INSERT, autocommit", "INSERT INTO t (a) VALUES (1); SELECT lastval()", rules.Group{}, 1},
		{"after an INSERT, one transaction", "INSERT INTO t (a) VALUES (1); SELECT lastval()", rules.Group{Explicit: true}, 0},
		{"before the INSERT", "SELECT lastval(); INSERT INTO t (a) VALUES (1)", rules.Group{Explicit: true}, 1},
		{"identity query", "SELECT currval('t_id_seq')", rules.Group{Explicit: true, AfterInsert: true}, 0},
		{"nextval of another sequence", "SELECT nextval('a'); SELECT currval('b')", rules.Group{Explicit: true}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.sql)
			funcs := rules.InterestingFuncs([]*rules.Rule{rules.SequenceSession})
			g := tt.group
			var stmts []*rules.Stmt
			for _, c := range sqlparse.Split(src).Chunks {
				for _, s := range sqlparse.ParseChunk(src, c) {
					s := s
					if s.Err != nil {
						t.Fatal(s.Err)
					}
					stmts = append(stmts, rules.NewStmt(&s, funcs))
				}
			}
			// Outside a transaction each statement is a group of its own.
			groups := []*rules.Group{&g}
			if g.Explicit {
				g.Stmts = stmts
			} else {
				groups = nil
				for _, st := range stmts {
					groups = append(groups, &rules.Group{Stmts: []*rules.Stmt{st}})
				}
			}
			got := 0
			for _, g := range groups {
				rules.NewPass(rules.SequenceSession, rules.Generic, g, func(rules.Finding) { got++ }).Run()
			}
			if got != tt.want {
				t.Errorf("%d findings, want %d", got, tt.want)
			}
		})
	}
}
