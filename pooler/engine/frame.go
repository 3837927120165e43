package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
)

// HeaderLen is the size of a regular message header: type and length.
const HeaderLen = 5

// ParseHeader reads a regular (post-startup) message header and returns
// the message type and the body length. It fails for a length field below
// 4 and, with a *TooLargeError, for bodies larger than max.
func ParseHeader(h []byte, max int) (typ byte, bodyLen int, err error) {
	if len(h) < HeaderLen {
		return 0, 0, fmt.Errorf("short message header (%d bytes)", len(h))
	}
	n := int64(int32(binary.BigEndian.Uint32(h[1:5])))
	if n < 4 {
		return 0, 0, fmt.Errorf("invalid message length %d", n)
	}
	if n-4 > int64(max) {
		return 0, 0, &TooLargeError{Type: h[0], Size: n - 4, Max: max}
	}
	return h[0], int(n - 4), nil
}

// ServerHeader reads the header of a server message: its type and body
// length. ok is false for a length below the header's own 4 bytes: the
// server's stream can no longer be followed. Both drivers frame the
// server's side with it; a server message may be of any size (the
// drivers stream what does not fit their buffers).
func ServerHeader(h []byte) (typ byte, bodyLen int, ok bool) {
	n := int(int32(binary.BigEndian.Uint32(h[1:5]))) - 4
	return h[0], n, n >= 0
}

// TooLargeError is a message over the configured maximum size.
type TooLargeError struct {
	Type byte
	Size int64
	Max  int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("message of type %q is %d bytes, more than the maximum of %d", e.Type, e.Size, e.Max)
}

// IsFrontendType reports whether typ is a message type a client may send
// after login (authentication messages are not among them).
func IsFrontendType(typ byte) bool {
	switch typ {
	case 'Q', 'P', 'B', 'D', 'E', 'C', 'S', 'H', 'X', 'd', 'c', 'f', 'F':
		return true
	}
	return false
}

// Act is what a driver does with the client message a Frame describes.
type Act uint8

const (
	// Relay: the message goes on (to the policy step and the server).
	Relay Act = iota
	// Skip: drop the message's Frame.Total bytes and go on.
	Skip
	// Terminate: the client said goodbye; clean up after it.
	Terminate
	// Violation: close the client with an ErrorResponse for Frame.Err.
	Violation
)

// Frame is the engine's decision on one client message, made from its
// header alone.
type Frame struct {
	Act  Act
	Type byte
	// Len is the body length; Total the whole message with its header.
	Len, Total int
	// Err is the protocol violation (Act Violation).
	Err error
}

// Client is the engine of one client. It owns no socket, goroutine, timer
// or lock: the client's owner feeds it events and carries out the steps it
// answers (events.go).
type Client struct {
	// Limits are the proxy's, shared by its clients.
	Limits *Limits

	// st is the relay state of the attached server (relay.go).
	st RelState
	// policy is the session-state policy, given at login (SetPolicy);
	// policyOn says whether it applies.
	policy   Policy
	policyOn bool
	// tracked says that the client's prepared statements are tracked
	// (track.go).
	tracked bool
	// Session is the session state the client made on its servers.
	Session Session
	// Startup are the settings the client's startup packet sets on every
	// server it uses (part of what its statements resolve against).
	Startup []Setting
	// nonce identifies the client in the names of statements private to
	// it (stmtContext); 0 until needed.
	nonce uint64

	// Prepared-statement tracking (track.go).
	// stmts are the client's named statements.
	stmts map[string]*stmt
	// unnamed is the body after the name of the client's latest unnamed
	// Parse (nil when it has none), unnamedGen counts its unnamed Parses.
	unnamed    []byte
	unnamedGen uint64
	// qseq counts the client's simple Queries and Executes (for
	// DEALLOCATE ALL).
	qseq uint64
	// fresh is set when a server is attached and cleared by the first
	// message planned on it (Server.serve).
	fresh bool

	// heldEffs and heldReplace are the verdict on the client's next
	// message while it waits with it (Hold; held): an admission that
	// answered the message (Reply) never waits.
	heldEffs    []StateEffect
	heldReplace string
	// rejectParse is the refusal Frontend answers the next Parse with
	// (reject policy); parseEffs are the effects of the Parse it is given
	// next, unnamedEffs those of the unnamed statement.
	rejectParse []byte
	parseEffs   []StateEffect
	unnamedEffs []StateEffect
	// reacher resolves ReachPending calls (SetReacher).
	reacher Reacher
	// skipTillSync drops the client's messages up to its next Sync after
	// the pooler refused one, as PostgreSQL does after an error in an
	// extended query.
	skipTillSync bool
	// held is set while a verdict is held.
	held bool
}

// Limits are what a client may do.
type Limits struct {
	// MaxMessage is the largest message body a client may send.
	MaxMessage int
	// MaxPrepared is how many protocol statements a server keeps.
	MaxPrepared int
	// MaxOwed is how many answers a server may owe a tracked client
	// before its next message waits (Saturated; DefaultMaxOwed when 0).
	MaxOwed int
	// Epoch is the schema epoch server-side statement names carry
	// (prepared.go).
	Epoch atomic.Uint64
	// Refs counts the clients that hold each server-side statement
	// (refs.go).
	Refs stmtRefs
}

// ErrInvalidType is the violation of a message type a client may not send.
var ErrInvalidType = errors.New("invalid frontend message type")

// Frame decides what to do with the client message whose header is h
// (HeaderLen bytes).
func (c *Client) Frame(h []byte) Frame {
	typ, n, err := ParseHeader(h, c.Limits.MaxMessage)
	if err != nil {
		return Frame{Act: Violation, Err: err}
	}
	f := Frame{Type: typ, Len: n, Total: HeaderLen + n}
	switch {
	case !IsFrontendType(typ):
		f.Act, f.Err = Violation, fmt.Errorf("%w %s", ErrInvalidType, QuoteByte(typ))
	case typ == 'X':
		f.Act = Terminate
	case c.skipTillSync && typ != 'S':
		f.Act = Skip
	}
	return f
}

// Hold keeps the policy's verdict on the client's next message while the
// message waits to be sent: for a server, or for the server's socket to
// drain. Whichever driver sends the message takes the verdict with
// TakeHeld instead of judging the message again.
func (c *Client) Hold(a Admission) {
	c.held, c.heldEffs, c.heldReplace = true, a.Effects, a.Replace
}

// TakeHeld returns the verdict Hold kept, once; ok is false when none is
// held.
func (c *Client) TakeHeld() (a Admission, ok bool) {
	if !c.held {
		return Admission{}, false
	}
	a = Admission{Effects: c.heldEffs, Replace: c.heldReplace}
	c.held, c.heldEffs, c.heldReplace = false, nil, ""
	return a, true
}

// Holding reports whether a verdict is held.
func (c *Client) Holding() bool { return c.held }

// SkipTillSync makes Frame skip the client's messages up to its next Sync
// (the pooler answered an error for one of them).
func (c *Client) SkipTillSync() { c.skipTillSync = true }

// Synced notes a Sync going to the server: skipping ends.
func (c *Client) Synced() { c.skipTillSync = false }

// Skipping reports whether messages are being skipped till the next Sync.
func (c *Client) Skipping() bool { return c.skipTillSync }

// IgnoredDetached reports whether a message of type typ is dropped when
// no server is attached: COPY messages outside a COPY, which PostgreSQL
// ignores too. Any other message needs a server.
func IgnoredDetached(typ byte) bool { return typ == 'd' || typ == 'c' || typ == 'f' }

// QuoteByte shows a message type byte in an error message.
func QuoteByte(b byte) string {
	if b >= 0x20 && b < 0x7f {
		return "'" + string(b) + "'"
	}
	return "0x" + string("0123456789abcdef"[b>>4]) + string("0123456789abcdef"[b&15])
}

// ErrorResponse encodes an ErrorResponse message with severity, SQLSTATE
// code and message, and a hint unless hint is "". Messages never contain
// passwords or parameter values.
func ErrorResponse(severity, code, message, hint string) []byte {
	b := []byte{'E', 0, 0, 0, 0}
	for _, f := range [...]struct {
		typ byte
		val string
	}{{'S', severity}, {'V', severity}, {'C', code}, {'M', message}, {'H', hint}} {
		if f.val == "" {
			continue
		}
		b = append(b, f.typ)
		b = append(b, f.val...)
		b = append(b, 0)
	}
	b = append(b, 0)
	binary.BigEndian.PutUint32(b[1:5], uint32(len(b)-1))
	return b
}
