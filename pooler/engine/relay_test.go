package engine

import (
	"slices"
	"testing"

	"github.com/pgpoolcheck/pgpoolcheck/rules/effects"
)

// TestClientRelease drives a client's relay state through the messages a
// driver reports and checks the release verdict after each ReadyForQuery.
func TestClientRelease(t *testing.T) {
	tests := []struct {
		name    string
		session bool
		sent    []byte // client messages, in order
		ready   []byte // then ReadyForQuery statuses, in order
		owed    int
		pinned  bool
		want    ReleaseVerdict
	}{
		{"simple query", false, []byte{'Q'}, []byte{'I'}, 0, false, ReleaseNow},
		{"inside a transaction", false, []byte{'Q'}, []byte{'T'}, 0, false, Keep},
		{"failed transaction", false, []byte{'Q'}, []byte{'E'}, 0, false, Keep},
		{"pipeline, first of two answers", false, []byte{'P', 'B', 'E', 'S', 'P', 'B', 'E', 'S'}, []byte{'I'}, 0, false, Keep},
		{"pipeline, both answers", false, []byte{'P', 'B', 'E', 'S', 'P', 'B', 'E', 'S'}, []byte{'I', 'I'}, 0, false, ReleaseNow},
		{"Parse after the Sync", false, []byte{'S', 'P'}, []byte{'I'}, 0, false, Keep},
		{"session mode", true, []byte{'Q'}, []byte{'I'}, 0, false, Keep},
		{"pinned", false, []byte{'Q'}, []byte{'I'}, 0, true, Keep},
		{"answers still owed", false, []byte{'Q'}, []byte{'I'}, 2, false, KeepOwed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Client
			c.Attached(tt.session)
			for _, typ := range tt.sent {
				CountFrontend(&c.st, typ)
			}
			c.st.Pinned = tt.pinned
			for _, st := range tt.ready {
				c.ready(st)
			}
			if got := c.release(tt.owed); got != tt.want {
				t.Errorf("Release(%d) = %d, want %d (state %+v)", tt.owed, got, tt.want, c.State())
			}
		})
	}
}

// TestClientVanish checks the plan for a leaving client's server and what
// it does to the relay state: the planned queries are owed, the server's
// tracking expects their answers, and the server is released at the last.
func TestClientVanish(t *testing.T) {
	tests := []struct {
		name     string
		attached bool
		session  bool
		sent     []byte
		ready    []byte
		broken   bool
		want     VanishAction
		queries  []string
	}{
		{"no server", false, false, nil, nil, false, VanishNothing, nil},
		{"between transactions", true, false, []byte{'Q'}, []byte{'I'}, false, VanishReset, []string{""}},
		{"session mode, between transactions", true, true, []byte{'Q'}, []byte{'I'}, false, VanishReset, []string{"DISCARD ALL"}},
		{"inside a transaction", true, false, []byte{'Q'}, []byte{'T'}, false, VanishClose, nil},
		{"inside a failed transaction", true, false, []byte{'Q'}, []byte{'E'}, false, VanishClose, nil},
		{"session mode, inside a transaction", true, true, []byte{'Q'}, []byte{'T'}, false, VanishClose, nil},
		{"query running", true, false, []byte{'Q'}, nil, false, VanishCancelClose, nil},
		{"extended query without Sync", true, false, []byte{'P', 'B'}, nil, false, VanishClose, nil},
		{"broken stream", true, false, []byte{'Q'}, []byte{'I'}, true, VanishClose, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Client
			var srv Server
			if tt.attached {
				c.Attached(tt.session)
			}
			for _, typ := range tt.sent {
				CountFrontend(&c.st, typ)
			}
			for _, st := range tt.ready {
				c.ready(st)
			}
			if tt.broken {
				c.Broke()
			}
			c.st.Pinned = tt.attached && !tt.session
			pl := c.Vanish(tt.attached, &srv)
			if pl.Action != tt.want || !slices.Equal(pl.Queries, tt.queries) {
				t.Fatalf("Vanish = %d %q, want %d %q", pl.Action, pl.Queries, tt.want, tt.queries)
			}
			if srv.Pending() != len(tt.queries) {
				t.Errorf("server expects %d answers, want %d", srv.Pending(), len(tt.queries))
			}
			switch pl.Action {
			case VanishReset:
				if c.release(0) != Keep {
					t.Errorf("releasable before the planned queries were answered")
				}
				for range pl.Queries {
					c.ready('I')
				}
				if got := c.release(0); got != ReleaseNow {
					t.Errorf("after the planned queries: Release = %d, want ReleaseNow (state %+v)", got, c.State())
				}
			case VanishClose, VanishCancelClose:
				if c.release(0) != Keep {
					t.Errorf("a server to close is releasable")
				}
			}
		})
	}
}

func TestClientMustVerifyAndClean(t *testing.T) {
	call := []StateEffect{{Kind: effects.CallRoutine}}
	tests := []struct {
		name      string
		policy    Policy
		on        bool
		effs      []StateEffect
		status    byte
		gone      bool
		verify    bool
		mustClean bool
	}{
		{"nothing run", PolicyPreserve, true, nil, 'I', false, false, false},
		{"a setting, preserve", PolicyPreserve, true, []StateEffect{{Kind: effects.SetParam, Name: "work_mem"}}, 'I', false, false, true},
		{"routine call, preserve", PolicyPreserve, true, call, 'I', false, true, true},
		{"routine call, inside a transaction", PolicyPreserve, true, call, 'T', false, false, true},
		{"routine call, client gone", PolicyPreserve, true, call, 'I', true, false, true},
		{"routine call, reset", PolicyReset, true, call, 'I', false, false, true},
		{"routine call, reset, inside a transaction", PolicyReset, true, call, 'T', false, false, true},
		{"policy off", PolicyPreserve, false, call, 'I', false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Client
			c.SetPolicy(tt.policy, tt.on, false)
			c.Attached(false)
			CountFrontend(&c.st, 'Q')
			c.Session.Apply(tt.effs, func(string) bool { return false })
			c.ready(tt.status)
			if got := c.mustVerify(tt.status, tt.gone); got != tt.verify {
				t.Errorf("MustVerify = %v, want %v", got, tt.verify)
			}
			if got := c.mustClean(); got != tt.mustClean {
				t.Errorf("MustClean = %v, want %v", got, tt.mustClean)
			}
		})
	}
}
