package pooler

import "testing"

func TestMayRelease(t *testing.T) {
	tests := []struct {
		name string
		s    relState
		want bool
	}{
		{"idle, nothing pending", relState{TxStatus: 'I'}, true},
		{"in transaction", relState{TxStatus: 'T'}, false},
		{"failed transaction", relState{TxStatus: 'E'}, false},
		{"idle but a Sync pending (pipeline)", relState{TxStatus: 'I', PendingSyncs: 1}, false},
		{"idle, several Syncs pending", relState{TxStatus: 'I', PendingSyncs: 3}, false},
		{"idle, Parse/Bind sent without Sync", relState{TxStatus: 'I', Unsynced: true}, false},
		{"session mode", relState{TxStatus: 'I', HeldForSession: true}, false},
		{"pinned", relState{TxStatus: 'I', Pinned: true}, false},
		{"broken", relState{TxStatus: 'I', Broken: true}, false},
		{"no ReadyForQuery seen yet", relState{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mayRelease(tt.s); got != tt.want {
				t.Errorf("mayRelease(%+v) = %v, want %v", tt.s, got, tt.want)
			}
		})
	}
}

func TestCountFrontendPipeline(t *testing.T) {
	// Parse/Bind/Execute/Sync three times, then the three ReadyForQuery.
	s := relState{TxStatus: 'I'}
	for range 3 {
		for _, typ := range []byte{'P', 'B', 'E'} {
			countFrontend(&s, typ)
			if mayRelease(s) {
				t.Fatalf("releasable after %q", typ)
			}
		}
		countFrontend(&s, 'S')
	}
	for i := range 3 {
		if mayRelease(s) {
			t.Fatalf("releasable with %d ReadyForQuery outstanding", 3-i)
		}
		s.PendingSyncs--
		s.TxStatus = 'I'
	}
	if !mayRelease(s) {
		t.Fatal("not releasable after the last ReadyForQuery")
	}
	// Flush without Sync keeps the server.
	countFrontend(&s, 'H')
	if mayRelease(s) {
		t.Fatal("releasable after Flush")
	}
	// CopyData and Terminate do not change the state.
	s = relState{TxStatus: 'I'}
	for _, typ := range []byte{'d', 'c', 'f', 'X'} {
		countFrontend(&s, typ)
	}
	if !mayRelease(s) {
		t.Fatal("copy messages changed the state")
	}
}

func TestOnVanish(t *testing.T) {
	tests := []struct {
		name     string
		attached bool
		s        relState
		want     vanishAction
	}{
		{"no server", false, relState{}, vanishNothing},
		{"idle", true, relState{TxStatus: 'I'}, vanishReset},
		{"idle in transaction", true, relState{TxStatus: 'T'}, vanishRollback},
		{"failed transaction", true, relState{TxStatus: 'E'}, vanishRollback},
		{"query running", true, relState{TxStatus: 'I', PendingSyncs: 1}, vanishCancelClose},
		{"query running in transaction", true, relState{TxStatus: 'T', PendingSyncs: 1}, vanishCancelClose},
		{"unsynced extended query", true, relState{TxStatus: 'T', Unsynced: true}, vanishClose},
		{"broken", true, relState{TxStatus: 'I', Broken: true}, vanishClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := onVanish(tt.attached, tt.s); got != tt.want {
				t.Errorf("onVanish = %v, want %v", got, tt.want)
			}
		})
	}
}
