package engine

import "fmt"

// Place is where a client is in its life with the pooler. It is one field
// of the client, changed only through Move, so that every driver agrees on
// it; which event loop holds the client is the driver's business and not
// a place.
type Place uint8

// Places.
const (
	// LoggingIn: the startup packet and authentication.
	LoggingIn Place = iota
	// Idle: logged in, no server attached.
	Idle
	// Waiting: the client asked for a server and has none yet: it waits
	// in its pool's queue, or a server is being logged in for it.
	Waiting
	// Attached: a server is attached for the client's transaction (or,
	// in session mode, its session).
	Attached
	// Pinned: a server is attached and held for session state the
	// client made on it (the preserve policy).
	Pinned
	// Closing: the client left or is being closed. Final.
	Closing
)

var placeNames = [...]string{"logging in", "idle", "waiting", "attached", "pinned", "closing"}

func (p Place) String() string {
	if int(p) < len(placeNames) {
		return placeNames[p]
	}
	return fmt.Sprintf("place(%d)", p)
}

// moves[from] is the set of places a client may go to from there.
var moves = [...]uint8{
	LoggingIn: 1<<Idle | 1<<Closing,
	Idle:      1<<Waiting | 1<<Attached | 1<<Closing,
	Waiting:   1<<Attached | 1<<Idle | 1<<Closing,
	Attached:  1<<Idle | 1<<Pinned | 1<<Closing,
	Pinned:    1<<Attached | 1<<Closing,
	Closing:   0,
}

// CanMove reports whether a client may go from p to to. Staying is
// always allowed.
func (p Place) CanMove(to Place) bool {
	if p == to {
		return true
	}
	return int(p) < len(moves) && int(to) < len(placeNames) && moves[p]&(1<<to) != 0
}

// HasServer reports whether a server is attached to a client in p.
func (p Place) HasServer() bool { return p == Attached || p == Pinned }

// Move changes *p to to. A move the state machine does not allow is
// refused with an error that names both places, and *p is left as it was:
// the caller reports it (it is a pooler bug) and goes on.
func Move(p *Place, to Place) error {
	if !p.CanMove(to) {
		return fmt.Errorf("client cannot go from %s to %s", *p, to)
	}
	*p = to
	return nil
}
