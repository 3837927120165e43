package pooler

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// fakeRoutines is a catalog of routine definitions for stateRead: each
// definition names what the analyzer finds in it.
type fakeRoutines map[string][]fakeDef

type fakeDef struct {
	clean, opaque bool
	params, calls []string
	extension     string
	text          string // more of the definition's text
}

// AnalyzeRoutine reads the definition encoded by defsAnswer.
func (fakeRoutines) AnalyzeRoutine(def string) (clean, opaque bool, params, calls []string) {
	var d struct {
		Clean, Opaque bool
		Params, Calls []string
	}
	if json.Unmarshal([]byte(def), &d) != nil {
		return false, true, nil, nil
	}
	return d.Clean, d.Opaque, d.Params, d.Calls
}

func (fakeRoutines) Classify(string) ([]StateEffect, string) { return nil, "" }

// defsAnswer answers a routineDefsQuery for names as the server would.
func (f fakeRoutines) defsAnswer(names []string) []string {
	var rows [][3]*string
	for _, n := range names {
		for _, d := range f[n] {
			b, _ := json.Marshal(struct {
				Clean, Opaque bool
				Params, Calls []string
				Text          string
			}{d.clean, d.opaque, d.params, d.calls, d.text})
			k, def := n, string(b)
			row := [3]*string{&k, &def, nil}
			if d.extension != "" {
				ext := d.extension
				row[2] = &ext
			}
			rows = append(rows, row)
		}
	}
	b, _ := json.Marshal(rows)
	return []string{string(b)}
}

// TestStateRead runs the read of a server's state after routine calls
// against a catalog: the definitions of a level of calls are read in one
// query, recursion and calls deeper than routineDepth count as opaque,
// and the parameters the routines may set are what the state query reads.
func TestStateRead(t *testing.T) {
	cat := fakeRoutines{
		"plain":    {{clean: true}},
		"sets":     {{params: []string{"work_mem"}}},
		"tenant":   {{params: []string{"app.tenant"}}},
		"outer":    {{clean: true, calls: []string{"sets", "plain"}}},
		"self":     {{clean: true, calls: []string{"self"}}},
		"d0":       {{clean: true, calls: []string{"d1"}}},
		"d1":       {{clean: true, calls: []string{"d2"}}},
		"d2":       {{clean: true, calls: []string{"d3"}}},
		"d3":       {{clean: true, calls: []string{"d4"}}},
		"d4":       {{clean: true, calls: []string{"d5"}}},
		"d5":       {{clean: true}},
		"two":      {{clean: true}, {params: []string{"search_path"}}},
		"ext":      {{opaque: true, extension: "trustme"}},
		"s.q":      {{clean: true}},
		"dyn":      {{opaque: true}},
		"withtrap": {{clean: true, calls: []string{"missing"}}},
	}
	tests := []struct {
		name    string
		calls   []string
		queries int // definition queries before the state query
		plain   []string
		custom  []string
		opaque  bool
		clean   []string // learned as changing nothing
	}{
		{name: "plain", calls: []string{"plain"}, queries: 1, clean: []string{"plain"}},
		{name: "a parameter", calls: []string{"sets"}, queries: 1, plain: []string{"work_mem"}},
		{name: "a custom parameter", calls: []string{"tenant"}, queries: 1, custom: []string{"app.tenant"}},
		{name: "calls, one level per query", calls: []string{"outer"}, queries: 2, plain: []string{"work_mem"}, clean: []string{"plain"}},
		{name: "recursion", calls: []string{"self"}, queries: 1, opaque: true},
		{name: "too deep", calls: []string{"d0"}, queries: 5, opaque: true},
		{name: "not too deep", calls: []string{"d1"}, queries: 5, clean: []string{"d1", "d2", "d3", "d4", "d5"}},
		{name: "overloads", calls: []string{"two"}, queries: 1, plain: []string{"search_path"}},
		{name: "trusted extension", calls: []string{"ext"}, queries: 1, clean: []string{"ext"}},
		{name: "qualified", calls: []string{"s.q"}, queries: 1, clean: []string{"s.q"}},
		{name: "dynamic", calls: []string{"dyn"}, queries: 1, opaque: true},
		{name: "unknown routine", calls: []string{"nosuch"}, queries: 1, opaque: true},
		{name: "calls an unknown routine", calls: []string{"withtrap"}, queries: 2, opaque: true},
		{name: "DO block", calls: []string{effects.DOBlock}, queries: 0},
		{name: "opaque DO block", calls: []string{effects.OpaqueDOBlock}, queries: 0, opaque: true},
		{name: "a level read together", calls: []string{"sets", "tenant", "plain"}, queries: 1,
			plain: []string{"work_mem"}, custom: []string{"app.tenant"}, clean: []string{"plain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Proxy{}
			p.cfg.Classifier = cat
			p.trust = routineTrust{extensions: map[string]bool{"trustme": true}}
			rd := newStateRead(p, "db", tt.calls)
			defs := 0
			for q := rd.next(); q != ""; q = rd.next() {
				if strings.HasPrefix(q, "SELECT current_setting('role')") {
					rd.answer([]string{"none"}, nil)
					continue
				}
				if q == reachQuery {
					rd.answer([]string{"[]"}, nil) // nothing reaches user code
					continue
				}
				defs++
				if defs > 10 {
					t.Fatal("the read does not end")
				}
				rd.answer(cat.defsAnswer(slices.Clone(rd.level)), nil)
			}
			if defs != tt.queries {
				t.Errorf("%d definition queries, want %d", defs, tt.queries)
			}
			if !rd.done || rd.failed {
				t.Errorf("done %v, failed %v; want done", rd.done, rd.failed)
			}
			if !slices.Equal(rd.plain, tt.plain) || !slices.Equal(rd.custom, tt.custom) || rd.opaque != tt.opaque {
				t.Errorf("plain %q custom %q opaque %v; want %q %q %v", rd.plain, rd.custom, rd.opaque, tt.plain, tt.custom, tt.opaque)
			}
			for _, n := range tt.clean {
				if !p.routines.clean("db", n, rd.now) {
					t.Errorf("%s not learned as clean", n)
				}
			}
			// What was learned is not asked again.
			again := newStateRead(p, "db", tt.calls)
			if q := again.next(); len(tt.clean) == len(tt.calls) && len(tt.clean) > 0 && !strings.HasPrefix(q, "SELECT current_setting('role')") {
				t.Errorf("routines learned as clean are read again: %.60s", q)
			}
		})
	}
}

// A read ends at the first failure of the server's connection; an error
// the server answers to a definition query makes those routines opaque
// and the read goes on.
func TestStateReadFailures(t *testing.T) {
	p := &Proxy{}
	p.cfg.Classifier = fakeRoutines{}
	rd := newStateRead(p, "db", []string{"f", "g"})
	if q := rd.next(); q != reachQuery {
		t.Fatalf("first query %.60s, want what statements reach", q)
	}
	rd.answer([]string{"[]"}, nil)
	if q := rd.next(); !strings.Contains(q, "'f'") || !strings.Contains(q, "'g'") {
		t.Fatalf("first query %.200s, want the definitions of f and g", q)
	}
	rd.answer(nil, &serverError{body: []byte("SERROR\x00C42883\x00\x00")})
	if q := rd.next(); !strings.HasPrefix(q, "SELECT current_setting('role')") {
		t.Fatalf("after a server error: %.60s, want the state query", q)
	}
	if !rd.opaque {
		t.Error("routines whose definitions could not be read are not opaque")
	}
	rd.answer(nil, errors.New("connection reset"))
	if q := rd.next(); q != "" || !rd.failed {
		t.Fatalf("after a connection failure: next %q, failed %v; want the end", q, rd.failed)
	}
}

// Statements classified while the database's reach was unknown are kept
// and matched against it when it is read, first thing in the read after
// their transaction: one that reaches no code needs no state read at all.
func TestStateReadReach(t *testing.T) {
	cat := fakeRoutines{
		"s.tenant": {{params: []string{"app.tenant"}}},
		"s.plain":  {{clean: true}},
		"s.body":   {{clean: true, text: "SELECT * FROM v"}},
	}
	const reach = `[["v", "s.tenant"], ["w", "s.plain"], ["vb", ""]]`
	tests := []struct {
		name      string
		calls     []string
		reach     string // the answer to reachQuery ("": an error)
		queries   []string
		custom    []string
		opaque    bool
		unreached bool
	}{
		{name: "reaches a routine", calls: []string{reachPending + "SELECT * FROM V"}, reach: reach,
			queries: []string{"reach", "defs", "state"}, custom: []string{"app.tenant"}},
		{name: "reaches a plain routine", calls: []string{reachPending + "SELECT * FROM w"}, reach: reach,
			queries: []string{"reach", "defs", "state"}},
		{name: "reaches nothing", calls: []string{reachPending + "SELECT * FROM t"}, reach: reach,
			queries: []string{"reach"}, unreached: true},
		{name: "reaches set_config itself", calls: []string{reachPending + "SELECT * FROM vb"}, reach: reach,
			queries: []string{"reach", "state"}, opaque: true},
		{name: "too long to keep", calls: []string{reachAll}, reach: reach,
			queries: []string{"reach", "defs", "state"}, custom: []string{"app.tenant"}, opaque: true},
		{name: "reach unreadable", calls: []string{reachPending + "SELECT * FROM t"}, reach: "",
			queries: []string{"reach", "state"}, opaque: true},
		{name: "a routine body reaches", calls: []string{"s.body"}, reach: reach,
			queries: []string{"reach", "defs", "defs", "state"}, custom: []string{"app.tenant"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Proxy{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			p.cfg.Classifier = cat
			rd := newStateRead(p, "db", tt.calls)
			var got []string
			for q := rd.next(); q != ""; q = rd.next() {
				switch {
				case q == reachQuery:
					got = append(got, "reach")
					if tt.reach == "" {
						rd.answer(nil, &serverError{body: []byte("SERROR\x00C42501\x00\x00")})
					} else {
						rd.answer([]string{tt.reach}, nil)
					}
				case strings.HasPrefix(q, "SELECT current_setting('role')"):
					got = append(got, "state")
					rd.answer(slices.Repeat([]string{""}, 7+len(rd.custom)), nil)
				default:
					got = append(got, "defs")
					rd.answer(cat.defsAnswer(slices.Clone(rd.level)), nil)
				}
				if len(got) > 10 {
					t.Fatal("the read does not end")
				}
			}
			if !slices.Equal(got, tt.queries) {
				t.Errorf("queries %v, want %v", got, tt.queries)
			}
			if !slices.Equal(rd.custom, tt.custom) || rd.opaque != tt.opaque || rd.unreached != tt.unreached {
				t.Errorf("custom %q opaque %v unreached %v; want %q %v %v", rd.custom, rd.opaque, rd.unreached, tt.custom, tt.opaque, tt.unreached)
			}
			if want := int64(0); tt.unreached && p.stats.verifications.Load() != want {
				t.Errorf("%d verifications counted for statements that reach nothing", p.stats.verifications.Load())
			}
		})
	}
}
