package pooler

import (
	"errors"

	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// loopQuery is a run of queries of the pooler's own that a loop sends on a
// server for a client (a setup before the client gets it, a clean after
// the client released it): their answers are read as they come
// (queryAnswers), and done runs once, at the last ReadyForQuery or when
// the server fails, with the first error and the first query's first row
// (when asked for).
type loopQuery struct {
	due     int // ReadyForQuery still to come
	wantRow bool
	row     []string
	err     error
	done    func(err error, row []string)
	// big gathers a message larger than the read buffer (bigType).
	big     []byte
	bigType byte
}

// runQueries sends qs on s, which the loop watches for c, and runs done
// when their answers are in (or s failed). wantRow keeps the first
// query's first row for done. When the queries cannot be written, s is
// closed and the error returned, and done does not run.
func (l *evLoop) runQueries(c *clientConn, s *serverConn, qs []string, wantRow bool, done func(err error, row []string)) error {
	q := &loopQuery{due: len(qs), wantRow: wantRow, done: done}
	s.eng.SimpleQuery()
	var err error
	for _, sql := range qs {
		err = errors.Join(err, writeQuery(s.w, sql))
	}
	err = errors.Join(err, s.w.Flush())
	pend := s.raw.pending() > 0
	if err != nil {
		s.close()
		return err
	}
	s.lclient, s.lquery = c, q
	l.servers.set(s.lfd, s)
	if pend && !s.lout {
		s.lout = true
		l.modify(s.raw, s.lfd, true)
	}
	return nil
}

// notifyClient passes on to s's client a NotificationResponse (body) that
// came among the answers to the pooler's own queries on s: PostgreSQL
// sends one before the ReadyForQuery of whatever query runs when the
// NOTIFY commits, so the pooler's state read on the server of a client
// its LISTEN pins sees them, and they are that client's. It is passed on
// only while s is the client's server (its stream to the client is then
// between messages) and this loop owns the client; one that comes while
// a released server is cleaned (its LISTEN being undone) is dropped.
func (l *evLoop) notifyClient(s *serverConn, body []byte) {
	c := s.lclient
	if c == nil || c.gone || c.server != s || !l.owns(c) {
		return
	}
	w := c.writer()
	w.Write(engine.PutHeader(w.AvailableBuffer(), 'A', len(body)))
	w.Write(body)
	l.flushClient(c)
}

// queryAnswers reads what s answered to the loop's queries (runQueries).
// A message larger than the read buffer (a routine's definition, say) is
// gathered (q.big), up to maxSmallMessage as a goroutine's runInternal
// reads it.
func (l *evLoop) queryAnswers(s *serverConn) {
	q := s.lquery
	end := func(err error) {
		s.lquery = nil
		q.done(err, q.row)
	}
	// take handles one whole message; it reports the end of the run.
	take := func(typ byte, body []byte) bool {
		if typ == 'A' {
			l.notifyClient(s, body)
			return false
		}
		var row *[]string
		if q.wantRow {
			row = &q.row
		}
		if !s.internalAnswer(typ, body, row, &q.err) {
			return false
		}
		q.wantRow = false
		q.due--
		return q.due == 0
	}
	for {
		if q.big != nil {
			k := min(cap(q.big)-len(q.big), s.r.Buffered())
			b, _ := s.r.Peek(k)
			q.big = append(q.big, b...)
			s.r.Discard(k)
			if len(q.big) == cap(q.big) {
				body := q.big
				q.big = nil
				if take(q.bigType, body) {
					end(q.err)
					return
				}
			}
		}
		for q.big == nil && s.r.Buffered() >= headerLen {
			h, _ := s.r.Peek(headerLen)
			typ, n, ok := engine.ServerHeader(h)
			if !ok || n > maxSmallMessage {
				end(errBadInternalAnswer)
				return
			}
			if headerLen+n > s.r.Size() {
				s.r.Discard(headerLen)
				q.bigType, q.big = typ, make([]byte, 0, n)
				break
			}
			b, err := s.r.Peek(headerLen + n)
			if err != nil {
				break // the rest is still on its way
			}
			done := take(typ, b[headerLen:])
			s.r.Discard(headerLen + n)
			if done {
				end(q.err)
				return
			}
		}
		if q.big != nil && s.r.Buffered() > 0 {
			continue
		}
		got, _, err := readMore(s.r)
		if got > 0 {
			continue
		}
		if errors.Is(err, errAgain) {
			return
		}
		end(err)
		return
	}
}
