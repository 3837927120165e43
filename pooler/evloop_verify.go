package pooler

// verify reads the session state the client's routines left on s, the
// server attached to it on the loop, without blocking: the stateRead's
// queries go out one after another (runQueries) while the client waits
// (lwait), and then runs with whether the state was read
// (clientConn.stateFound) and whether s was lost meanwhile (its stream
// failed: it is closed, and may be anywhere in an answer).
func (l *evLoop) verify(c *clientConn, s *serverConn, then func(ok, lost bool)) {
	rd := c.startRead()
	c.lwait = true
	var answered func(err error, row []string)
	send := func() {
		q := rd.next()
		if q != "" {
			err := l.runQueries(c, s, []string{q}, true, answered)
			if err == nil {
				return
			}
			rd.answer(nil, err) // s is closed: the read fails
		}
		c.lwait = false
		if rd.lost {
			s.close()
		}
		then(c.stateFound(s, rd), rd.lost)
	}
	answered = func(err error, row []string) {
		rd.answer(row, err)
		send()
	}
	send()
}

// verifyAttached verifies the client's server between transactions,
// before it may go back to the pool (preserve, the engine's Verify step):
// what pins the client is found before anyone else could get the server.
// The ReadyForQuery with status was relayed; the release it may bring
// waits for the read (engine.Client.Verified, Settle, then settle).
func (l *evLoop) verifyAttached(c *clientConn, s *serverConn, status byte) {
	defer l.flushClient(c) // once the read is under way (and counted)
	l.verify(c, s, func(ok, lost bool) {
		if lost {
			l.serverGone(c, s)
			return
		}
		if !ok {
			// Not proved clean: the server stays with the client, and
			// is verified again (or closed) when it leaves.
			l.p.log.Warn("could not read a server's session state; client kept on it", "user", c.user)
		}
		c.pinPlace(c.eng.Verified(ok))
		then, owed := c.eng.Settle(&s.eng)
		switch c.settle(s, status, then, owed) {
		case smReleased:
			l.afterRelease(c)
		case smNext:
			if c.lmore || c.r != nil && c.r.Buffered() > 0 {
				// The client's next message came during the read.
				l.relayClient(c, !c.lmore)
			}
		}
	})
}
