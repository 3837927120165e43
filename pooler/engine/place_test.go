package engine

import "testing"

func TestPlaceMoves(t *testing.T) {
	// A client's usual lives, move by move.
	lives := map[string][]Place{
		"transaction":              {LoggingIn, Idle, Waiting, Attached, Idle, Attached, Idle, Closing},
		"idle server at once":      {LoggingIn, Idle, Attached, Idle, Closing},
		"pinned then unpinned":     {LoggingIn, Idle, Attached, Pinned, Attached, Idle},
		"leaves while pinned":      {LoggingIn, Idle, Attached, Pinned, Closing},
		"wait times out":           {LoggingIn, Idle, Waiting, Closing},
		"refused at login":         {LoggingIn, Closing},
		"server set-up fails":      {LoggingIn, Idle, Waiting, Idle, Waiting, Attached},
		"leaves inside a transact": {LoggingIn, Idle, Waiting, Attached, Closing},
	}
	for name, life := range lives {
		p := life[0]
		for _, to := range life[1:] {
			if err := Move(&p, to); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if p != to {
				t.Fatalf("%s: at %s after moving to %s", name, p, to)
			}
		}
	}
	bad := []struct{ from, to Place }{
		{LoggingIn, Attached}, {LoggingIn, Waiting}, {Idle, Pinned}, {Waiting, Pinned},
		{Pinned, Idle}, {Closing, Idle}, {Closing, Attached}, {Closing, LoggingIn}, {Attached, Waiting},
		{Idle, LoggingIn}, {Idle, Place(17)},
	}
	for _, b := range bad {
		p := b.from
		if err := Move(&p, b.to); err == nil || p != b.from {
			t.Errorf("%s → %s allowed (now %s)", b.from, b.to, p)
		}
	}
	for p := LoggingIn; p <= Closing; p++ {
		if !p.CanMove(p) {
			t.Errorf("%s cannot stay", p)
		}
		if p.HasServer() != (p == Attached || p == Pinned) {
			t.Errorf("%s HasServer", p)
		}
	}
	if Place(17).String() != "place(17)" {
		t.Error(Place(17).String())
	}
}
