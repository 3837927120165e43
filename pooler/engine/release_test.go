package engine

import "testing"

func TestMayRelease(t *testing.T) {
	tests := []struct {
		name string
		s    RelState
		want bool
	}{
		{"idle, nothing pending", RelState{TxStatus: 'I'}, true},
		{"in transaction", RelState{TxStatus: 'T'}, false},
		{"failed transaction", RelState{TxStatus: 'E'}, false},
		{"idle but a Sync pending (pipeline)", RelState{TxStatus: 'I', PendingSyncs: 1}, false},
		{"idle, several Syncs pending", RelState{TxStatus: 'I', PendingSyncs: 3}, false},
		{"idle, Parse/Bind sent without Sync", RelState{TxStatus: 'I', Unsynced: true}, false},
		{"session mode", RelState{TxStatus: 'I', HeldForSession: true}, false},
		{"pinned", RelState{TxStatus: 'I', Pinned: true}, false},
		{"broken", RelState{TxStatus: 'I', Broken: true}, false},
		{"no ReadyForQuery seen yet", RelState{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MayRelease(tt.s); got != tt.want {
				t.Errorf("MayRelease(%+v) = %v, want %v", tt.s, got, tt.want)
			}
		})
	}
}

func TestCountFrontendPipeline(t *testing.T) {
	// Parse/Bind/Execute/Sync three times, then the three ReadyForQuery.
	s := RelState{TxStatus: 'I'}
	for range 3 {
		for _, typ := range []byte{'P', 'B', 'E'} {
			CountFrontend(&s, typ)
			if MayRelease(s) {
				t.Fatalf("releasable after %q", typ)
			}
		}
		CountFrontend(&s, 'S')
	}
	for i := range 3 {
		if MayRelease(s) {
			t.Fatalf("releasable with %d ReadyForQuery outstanding", 3-i)
		}
		s.PendingSyncs--
		s.TxStatus = 'I'
	}
	if !MayRelease(s) {
		t.Fatal("not releasable after the last ReadyForQuery")
	}
	// Flush without Sync keeps the server.
	CountFrontend(&s, 'H')
	if MayRelease(s) {
		t.Fatal("releasable after Flush")
	}
	// CopyData and Terminate do not change the state.
	s = RelState{TxStatus: 'I'}
	for _, typ := range []byte{'d', 'c', 'f', 'X'} {
		CountFrontend(&s, typ)
	}
	if !MayRelease(s) {
		t.Fatal("copy messages changed the state")
	}
}

func TestOnVanish(t *testing.T) {
	tests := []struct {
		name     string
		attached bool
		s        RelState
		want     VanishAction
	}{
		{"no server", false, RelState{}, VanishNothing},
		{"idle", true, RelState{TxStatus: 'I'}, VanishReset},
		{"idle in transaction", true, RelState{TxStatus: 'T'}, VanishClose},
		{"failed transaction", true, RelState{TxStatus: 'E'}, VanishClose},
		{"pinned, in a transaction", true, RelState{TxStatus: 'T', Pinned: true}, VanishClose},
		{"pinned, idle", true, RelState{TxStatus: 'I', Pinned: true}, VanishReset},
		{"session mode, in a transaction", true, RelState{TxStatus: 'T', HeldForSession: true}, VanishClose},
		{"session mode, idle", true, RelState{TxStatus: 'I', HeldForSession: true}, VanishReset},
		{"query running", true, RelState{TxStatus: 'I', PendingSyncs: 1}, VanishCancelClose},
		{"query running in transaction", true, RelState{TxStatus: 'T', PendingSyncs: 1}, VanishCancelClose},
		{"unsynced extended query", true, RelState{TxStatus: 'T', Unsynced: true}, VanishClose},
		{"broken", true, RelState{TxStatus: 'I', Broken: true}, VanishClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OnVanish(tt.attached, tt.s); got != tt.want {
				t.Errorf("OnVanish = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIdleInTransaction(t *testing.T) {
	for _, tc := range []struct {
		s           RelState
		idleTx, qui bool
	}{
		{RelState{TxStatus: 'I'}, false, true},
		{RelState{TxStatus: 'T'}, true, true},
		{RelState{TxStatus: 'E'}, true, true},
		{RelState{TxStatus: 'T', PendingSyncs: 1}, false, false},
		{RelState{TxStatus: 'T', Unsynced: true}, false, false},
		{RelState{TxStatus: 'I', PendingSyncs: 2}, false, false},
		{RelState{TxStatus: 'T', Pinned: true}, true, true},
	} {
		if got := IdleInTransaction(tc.s); got != tc.idleTx {
			t.Errorf("IdleInTransaction(%+v) = %v", tc.s, got)
		}
		if got := Quiet(tc.s); got != tc.qui {
			t.Errorf("Quiet(%+v) = %v", tc.s, got)
		}
	}
}
