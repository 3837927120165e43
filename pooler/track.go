package pooler

import (
	"bufio"
	"errors"
	"io"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// This file carries out the plans of package engine's prepared-statement
// tracking (engine/prepared.go): writePlan sends a client message as
// engine.Client.Send planned it, and relayOut relays or swallows a server
// message as engine.Client.Server decided; the answers of the pooler's
// own that become due are written between them (emitSynths).

// frontendBody returns the body of the client message whose header is
// next in c.r: a view into the read buffer (want bytes at most) when the
// whole message fits, or, for a larger message with whole set, a copy
// read from the client (consumed reports that the message has then been
// taken out of c.r).
func (c *clientConn) frontendBody(n int, whole bool) (body []byte, consumed bool, err error) {
	if headerLen+n <= c.r.Size() {
		b, err := c.r.Peek(headerLen + n)
		if err != nil {
			return nil, false, err
		}
		return b[headerLen:], false, nil
	}
	if !whole {
		b, err := c.r.Peek(c.r.Size())
		if err != nil && len(b) <= headerLen {
			return nil, false, err
		}
		return b[headerLen:], false, nil
	}
	if _, err := c.r.Discard(headerLen); err != nil {
		return nil, true, err
	}
	body = make([]byte, n)
	_, err = io.ReadFull(c.r, body)
	return body, true, err
}

// writePlan sends the client's message (header next in c.r, or already
// consumed into body) to the server as planned. Errors follow
// copyMessage: a failed write is errWrite, anything else is the client's.
func (c *clientConn) writePlan(w *bufio.Writer, typ byte, n int, body []byte, consumed bool, pl *engine.Plan) error {
	closeStmt := func(name string) {
		w.Write(engine.PutHeader(w.AvailableBuffer(), 'C', 1+len(name)+1))
		w.WriteByte('S')
		w.WriteString(name)
		w.WriteByte(0)
	}
	for _, name := range pl.Closes {
		closeStmt(name)
	}
	switch pl.CloseName {
	case "":
	case "\x00unnamed":
		closeStmt("")
	default:
		closeStmt(pl.CloseName)
	}
	if pl.Inject {
		w.Write(engine.PutHeader(w.AvailableBuffer(), 'P', len(pl.InjName)+1+len(pl.InjRest)))
		w.WriteString(pl.InjName)
		w.WriteByte(0)
		w.Write(pl.InjRest)
	}
	if pl.InjSync {
		w.Write(engine.PutHeader(w.AvailableBuffer(), 'S', 0))
	}
	switch pl.Action {
	case engine.PlanReplace:
		if !consumed {
			if err := discardMessage(c.r, headerLen+n); err != nil {
				return err
			}
		}
		writeQuery(w, pl.Replace)
	case engine.PlanDrop:
		if !consumed {
			if err := discardMessage(c.r, headerLen+n); err != nil {
				return err
			}
		}
	case engine.PlanRename:
		var newLen int
		switch typ {
		case 'P':
			newLen = len(pl.NewName) + 1 + len(pl.Tail)
		case 'B':
			newLen = len(pl.Head) + 1 + len(pl.NewName) + 1 + n - pl.Skip
		default: // 'D'
			newLen = len(pl.Head) + len(pl.NewName) + 1
		}
		w.Write(engine.PutHeader(w.AvailableBuffer(), typ, newLen))
		if len(pl.Head) > 0 || typ == 'B' {
			w.Write(pl.Head)
		}
		if typ == 'B' {
			w.WriteByte(0)
		}
		w.WriteString(pl.NewName)
		w.WriteByte(0)
		if typ == 'P' {
			w.Write(pl.Tail)
		}
		if consumed {
			if typ == 'B' {
				w.Write(body[pl.Skip:])
			}
			break
		}
		if _, err := c.r.Discard(headerLen + pl.Skip); err != nil {
			return err
		}
		if rest := n - pl.Skip; rest > 0 {
			if err := copyMessage(w, c.r, rest); err != nil {
				return err
			}
		}
	default:
		if consumed {
			w.Write(engine.PutHeader(w.AvailableBuffer(), typ, n))
			w.Write(body)
		} else if err := copyMessage(w, c.r, headerLen+n); err != nil {
			return err
		}
	}
	// bufio.Writer errors are sticky: one check covers every write.
	if _, err := w.Write(nil); err != nil {
		return errWrite
	}
	return nil
}

// emitSynths sends the pooler's own answers that are due: those at
// the head of the queue.
func (c *clientConn) emitSynths(s *serverConn) {
	for m := s.eng.PopSynth(); m != nil; m = s.eng.PopSynth() {
		if c.rec != nil && !c.vanished.Load() {
			c.rec.Backend(m[0], m[headerLen:])
		}
		if !c.vanished.Load() {
			c.writer().Write(m)
		}
	}
	s.synthHead.Store(false)
}

// emitDueSynths sends due answers of the pooler's own (and flushes, with
// flush): the loop calls it once it has relayed what the client sent, and
// before it relays a server message.
func (c *clientConn) emitDueSynths(s *serverConn, flush bool) {
	if c.server == s {
		c.emitSynths(s)
	}
	if flush && c.w != nil && !c.vanished.Load() {
		c.w.Flush()
	}
}

// relayOut relays total bytes of a server message from s.r to the
// client, or drops them: when the engine does not forward the message,
// and once the client has gone. Write errors are left to the client's
// socket (a vanished client's server is still drained).
func (c *clientConn) relayOut(s *serverConn, total int, forward bool) error {
	if !forward || c.vanished.Load() {
		_, err := s.r.Discard(total)
		return err
	}
	c.ctr.tx += int64(total)
	if err := copyMessage(c.writer(), s.r, total); err != nil && !errors.Is(err, errWrite) {
		return err
	}
	return nil
}

// emitIfDue sends the pooler's own answers that became due once a
// server message was relayed whole.
func (c *clientConn) emitIfDue(s *serverConn) {
	if s.eng.SynthDue() {
		c.emitSynths(s)
	}
}
