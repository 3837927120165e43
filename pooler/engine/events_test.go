package engine

import (
	"bytes"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// event is one step of a scripted exchange between a client and its
// server, fed to the engine as a driver would.
type event struct {
	client byte          // a client message sent (Send), or 0
	effs   []StateEffect // its effects
	server byte          // a server message (Server), or 0
	body   []byte        // its body
}

func sent(typ byte, effs ...StateEffect) event { return event{client: typ, effs: effs} }
func got(typ byte, body ...byte) event         { return event{server: typ, body: body} }

// TestServerSteps scripts exchanges and checks the engine's step at the
// last server message: whether it goes to the client and what becomes of
// the server.
func TestServerSteps(t *testing.T) {
	set := StateEffect{Kind: effects.SetParam, Name: "work_mem", Rule: "set"}
	listen := StateEffect{Kind: effects.Listen, Name: "ch", Rule: "listen"}
	call := StateEffect{Kind: effects.CallRoutine, Name: "f"}
	fatal := ErrorResponse("FATAL", "57P01", "terminating", "")[5:]
	tests := []struct {
		name    string
		policy  Policy
		session bool
		script  []event
		forward bool
		then    Then
	}{
		{"a query between transactions", PolicyPreserve, false,
			[]event{sent('Q'), got('C', []byte("SELECT 1\x00")...), got('Z', 'I')}, true, Release},
		{"inside a transaction", PolicyPreserve, false,
			[]event{sent('Q'), got('Z', 'T')}, true, Stay},
		{"a data row", PolicyPreserve, false,
			[]event{sent('Q'), got('D')}, true, Stay},
		{"a pipeline half answered", PolicyPreserve, false,
			[]event{sent('Q'), sent('Q'), got('Z', 'I')}, true, Stay},
		{"session mode", PolicyPreserve, true,
			[]event{sent('Q'), got('Z', 'I')}, true, Stay},
		{"a setting under preserve is read back and cleaned", PolicyPreserve, false,
			[]event{sent('Q', set), got('Z', 'I')}, true, Clean},
		{"a setting under reset is cleaned", PolicyReset, false,
			[]event{sent('Q', set), got('Z', 'I')}, true, Clean},
		{"a setting under allow stays on the server", PolicyAllow, false,
			[]event{sent('Q', set), got('Z', 'I')}, true, Release},
		{"LISTEN pins under preserve", PolicyPreserve, false,
			[]event{sent('Q', listen), got('Z', 'I')}, true, Stay},
		{"a routine call under preserve is verified", PolicyPreserve, false,
			[]event{sent('Q', call), got('Z', 'I')}, true, Verify},
		{"a routine call inside a transaction waits", PolicyPreserve, false,
			[]event{sent('Q', call), got('Z', 'T')}, true, Stay},
		{"a ReadyForQuery without its status", PolicyPreserve, false,
			[]event{sent('Q'), got('Z')}, false, Lost},
		{"a ReadyForQuery too long", PolicyPreserve, false,
			[]event{sent('Q'), got('Z', 'I', 'I')}, false, Lost},
		{"a FATAL is relayed", PolicyPreserve, false,
			[]event{sent('Q'), got('E', fatal...)}, true, Stay},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Client
			var srv Server
			c.SetPolicy(tt.policy, true, false)
			c.Attached(tt.session)
			var st ServerStep
			for _, ev := range tt.script {
				if ev.client != 0 {
					c.Send(&srv, ev.client, nil, 0, c.Admit(ev.client, ev.effs, true), nil)
					continue
				}
				st = c.Server(&srv, ServerMsg{Type: ev.server, Len: len(ev.body), Body: ev.body}, false)
			}
			if st.Forward != tt.forward || st.Then != tt.then {
				t.Fatalf("step %+v, want forward %v then %d", st, tt.forward, tt.then)
			}
		})
	}
}

// TestVerifyThenSettle: a routine call makes the engine ask for a read of
// the server's state; what the read finds decides the release.
func TestVerifyThenSettle(t *testing.T) {
	call := StateEffect{Kind: effects.CallRoutine, Name: "f"}
	for _, tt := range []struct {
		name   string
		ok     bool
		pinned bool
		then   Then
	}{
		{"read, nothing held", true, false, Clean},
		{"not read", false, true, Stay},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var c Client
			var srv Server
			c.SetPolicy(PolicyPreserve, true, false)
			c.Attached(false)
			c.Send(&srv, 'Q', nil, 0, c.Admit('Q', []StateEffect{call}, true), nil)
			if st := c.Server(&srv, ServerMsg{Type: 'Z', Len: 1, Body: []byte{'I'}}, false); st.Then != Verify {
				t.Fatalf("step %+v, want Verify", st)
			}
			if c.Server(&srv, ServerMsg{Type: 'Z', Len: 1, Body: []byte{'I'}}, true).Then == Verify {
				t.Fatal("a client that left is verified")
			}
			if got := c.Verified(tt.ok); got != tt.pinned {
				t.Fatalf("Verified(%v) = %v, want %v", tt.ok, got, tt.pinned)
			}
			if then, _ := c.Settle(&srv); then != tt.then {
				t.Fatalf("Settle = %d, want %d", then, tt.then)
			}
		})
	}
}

// TestServerLostExplains: the client gets the pooler's own error when its
// server went without a FATAL of its own.
func TestServerLostExplains(t *testing.T) {
	var c Client
	var srv Server
	c.Attached(false)
	c.Send(&srv, 'Q', nil, 0, Admission{}, nil)
	if !c.ServerLost() {
		t.Fatal("a server lost without a word needs no explanation")
	}
	c.Attached(false)
	body := ErrorResponse("FATAL", "57P01", "terminating connection due to administrator command", "")[5:]
	c.Server(&srv, ServerMsg{Type: 'E', Len: len(body), Body: body}, false)
	if c.ServerLost() {
		t.Fatal("the server's FATAL is explained twice")
	}
	if c.release(0) != Keep {
		t.Fatal("a lost server may be released")
	}
}

// TestServerOwesAnswers: with tracking, a ReadyForQuery that leaves
// answers owed keeps the server with its client and says how many.
func TestServerOwesAnswers(t *testing.T) {
	var c Client
	var srv Server
	c.Limits = &Limits{MaxPrepared: 10}
	c.SetPolicy(PolicyPreserve, false, true)
	c.Attached(false)
	q := []byte("SELECT 1\x00")
	c.Send(&srv, 'Q', q, len(q), Admission{}, &Counters{})
	srv.ExpectQuery() // an answer the relay state does not count
	st := c.Server(&srv, ServerMsg{Type: 'Z', Len: 1, Body: []byte{'I'}}, false)
	if st.Then != Stay || st.Owed != 1 {
		t.Fatalf("step %+v, want Stay with 1 owed", st)
	}
}

// TestSaturated: a tracked client's next message waits once its server
// owes Limits.MaxOwed answers (DefaultMaxOwed when unset); an untracked
// client never waits.
func TestSaturated(t *testing.T) {
	for _, tc := range []struct {
		max, owed int
		tracked   bool
		want      bool
	}{
		{max: 3, owed: 2, tracked: true, want: false},
		{max: 3, owed: 3, tracked: true, want: true},
		{max: 3, owed: 30, tracked: false, want: false},
		{max: 0, owed: DefaultMaxOwed - 1, tracked: true, want: false},
		{max: 0, owed: DefaultMaxOwed, tracked: true, want: true},
	} {
		var c Client
		var srv Server
		c.Limits = &Limits{MaxOwed: tc.max}
		c.SetPolicy(PolicyPreserve, false, tc.tracked)
		for range tc.owed {
			srv.ExpectQuery()
		}
		if got := c.Saturated(&srv); got != tc.want {
			t.Errorf("MaxOwed %d, %d owed, tracked %v: Saturated %v, want %v", tc.max, tc.owed, tc.tracked, got, tc.want)
		}
	}
}

// TestAdmit: the policy's step for a statement by what it does.
func TestAdmit(t *testing.T) {
	listen := StateEffect{Kind: effects.Listen, Name: "ch", Rule: "listen", Fix: "use a session-mode pool"}
	unlisten := StateEffect{Kind: effects.UnlistenAll}
	tests := []struct {
		name     string
		policy   Policy
		on       bool
		typ      byte
		effs     []StateEffect
		attached bool
		want     string // pass, reply, raise, parse
	}{
		{"preserve passes", PolicyPreserve, true, 'Q', []StateEffect{listen}, false, "pass"},
		{"reject between transactions answers", PolicyReject, true, 'Q', []StateEffect{listen}, false, "reply"},
		{"reject inside a transaction raises", PolicyReject, true, 'Q', []StateEffect{listen}, true, "raise"},
		{"reject of a Parse among its answers", PolicyReject, true, 'P', []StateEffect{listen}, false, "parse"},
		{"reject passes what undoes state", PolicyReject, true, 'Q', []StateEffect{unlisten}, false, "pass"},
		{"policy off", PolicyReject, false, 'Q', []StateEffect{listen}, false, "pass"},
		{"a Bind is not judged", PolicyReject, true, 'B', []StateEffect{listen}, false, "pass"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Client
			c.SetPolicy(tt.policy, tt.on, true)
			a := c.Admit(tt.typ, tt.effs, tt.attached)
			got := "pass"
			switch {
			case a.Reply != nil:
				got = "reply"
				if !bytes.HasSuffix(a.Reply, []byte{'Z', 0, 0, 0, 5, 'I'}) || a.Reply[0] != 'E' {
					t.Errorf("reply %q: not an error and a ReadyForQuery", a.Reply)
				}
			case a.Replace != "":
				got = "raise"
			case c.rejectParse != nil:
				got = "parse"
			}
			if got != tt.want {
				t.Fatalf("Admit = %+v (%s), want %s", a, got, tt.want)
			}
			if got == "pass" && tt.on && len(tt.effs) > 0 && (tt.typ == 'Q' || tt.typ == 'P') && len(a.Effects) != len(tt.effs) {
				t.Fatalf("effects %v not passed on", a.Effects)
			}
		})
	}
}

// TestReads: what the engine reads of a client message before it is sent.
func TestReads(t *testing.T) {
	tests := []struct {
		on, tracked bool
		typ         byte
		n           int
		look, whole bool
	}{
		{false, false, 'Q', 10, false, false},
		{true, false, 'Q', 10, true, true},
		{true, false, 'Q', MaxClassified + 1, false, false},
		{true, true, 'Q', MaxClassified + 1, true, false},
		{false, true, 'P', 10, true, true},
		{false, true, 'B', 10, true, false},
		{false, true, 'E', 10, false, false},
		{true, true, 'd', 10, false, false},
	}
	for _, tt := range tests {
		var c Client
		c.SetPolicy(PolicyPreserve, tt.on, tt.tracked)
		look, whole := c.Reads(tt.typ, tt.n)
		if look != tt.look || whole != tt.whole {
			t.Errorf("on %v tracked %v %q %d: look %v whole %v, want %v %v", tt.on, tt.tracked, tt.typ, tt.n, look, whole, tt.look, tt.whole)
		}
	}
}

// TestTimeout: which timeout runs for a client in each relay state.
func TestTimeout(t *testing.T) {
	tests := []struct {
		name              string
		attached, waiting bool
		sent              []byte
		ready             []byte
		want              TimeoutKind
	}{
		{"idle without a server", false, false, nil, nil, ClientIdleTimeout},
		{"waiting for a server", false, true, nil, nil, NoTimeout},
		{"a query running", true, false, []byte{'Q'}, nil, QueryTimeout},
		{"idle in a transaction", true, false, []byte{'Q'}, []byte{'T'}, IdleTransactionTimeout},
		{"idle in a failed transaction", true, false, []byte{'Q'}, []byte{'E'}, IdleTransactionTimeout},
		{"idle on a kept server", true, false, []byte{'Q'}, []byte{'I'}, ClientIdleTimeout},
		{"an extended query without its Sync", true, false, []byte{'P', 'B'}, nil, QueryTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Client
			c.Attached(false)
			for _, typ := range tt.sent {
				CountFrontend(&c.st, typ)
			}
			for _, st := range tt.ready {
				c.ready(st)
			}
			if got := c.Timeout(tt.attached, tt.waiting); got != tt.want {
				t.Fatalf("Timeout = %d, want %d", got, tt.want)
			}
		})
	}
}
