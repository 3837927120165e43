package pooler

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgpoolcheck/pgpoolcheck/pooler/engine"
)

// noteParam keeps a ParameterStatus (body) the server s sent while
// attached to c: the server's parameters, and c's when it is tracked.
func (s *serverConn) noteParam(c *clientConn, body []byte) {
	name, value, ok := parseParameterStatus(body)
	if !ok {
		return
	}
	s.params[name] = value
	if engine.IsTracked(name) {
		s.sig = paramsSig(s.params)
		c.params = c.proxy.params.with(c.params, name, value)
	}
}

// serverConn is one connection to PostgreSQL, logged in by pgconn and then
// hijacked for raw relaying. While attached to a client, the client's
// loop alone reads and writes it; while idle in the pool nobody touches
// it, and once given back to be closed only terminate does.
type serverConn struct {
	pool *pool
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer

	pid    uint32
	secret []byte
	// params holds the values the server reported in ParameterStatus;
	// sig is paramsSig(params).
	params map[string]string
	sig    uint64

	created   time.Time
	idleSince time.Time

	// eng is the server's prepared-statement state (package engine),
	// used by the attached client's loop: the statements it holds, the
	// responses it owes, whose unnamed statement it has. synthHead is
	// set while an answer of the pooler's own is due (eng.SynthDue), for
	// the loop to look at first.
	eng       engine.Server
	synthHead atomic.Bool
	// cancels counts the cancel requests for s on their way to
	// PostgreSQL (cancelStarted); releasePending is set in it when s was
	// given back meanwhile: putBack waits for them (cancelDone), so that
	// a cancel never reaches the backend once another client has it.
	cancels atomic.Int32
	// rio is what r and w read and write: the socket (raw), or the
	// tls.Conn above it behind TLS (tls is set). raw is the socket, which
	// an event loop owns and watches either way.
	rio io.ReadWriter
	raw *rawIO
	tls bool
	// Event-loop state (evloop.go). loop is the loop whose epoll set has
	// the descriptor lfd, and the fields after it are used by that loop
	// alone: lclient is the loop's client s is attached to, lblocked
	// that relaying to the
	// client waits for its socket to drain, lout that the loop watches
	// the socket for writing, lhup that the peer closed its end (what is
	// left is read until the end, not only until a short read).
	loop                 *evLoop
	lfd                  int32
	lclient              *clientConn
	lblocked, lout, lhup bool
	// lquery is the queries of the pooler's own that the loop runs on s
	// (a setup, a clean: evLoop.runQueries), nil when none.
	lquery *loopQuery
	// lleft is what is still to come of a message larger than r that
	// the loop streams to the client as it arrives (evLoop.backend), or
	// drops (ldrop).
	lleft int
	ldrop bool
}

// serverBufSize is the read and write buffer size of a server connection.
const serverBufSize = 32 << 10

// dialServer connects and logs in to PostgreSQL as the pool's user and
// database, with the given run-time parameters.
func (p *pool) dialServer(ctx context.Context, params map[string]string) (*serverConn, error) {
	cfg := p.proxy.upstream.Copy()
	cfg.User = p.key.user
	cfg.Database = p.proxy.serverDatabase(p.key.database)
	p.lock()
	cfg.Password = p.password
	p.unlock()
	rp := make(map[string]string, len(cfg.RuntimeParams)+len(params))
	for k, v := range cfg.RuntimeParams {
		rp[k] = v
	}
	for k, v := range params {
		rp[k] = v
	}
	cfg.RuntimeParams = rp
	cfg.ConnectTimeout = p.proxy.live.connect()
	ctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	pc, err := connectServer(ctx, cfg, p.proxy.auth)
	if err != nil {
		return nil, err
	}
	// pgconn starts a background reader when one of its writes takes
	// over 15 ms (a loaded machine, many logins at once), and that reader
	// stays blocked in a read of the socket after the login: it would
	// take the server's first answer to a client from its loop. SyncConn
	// stops it (with a ping only in that case) and drains pgconn's
	// buffer, as pgconn asks before Hijack.
	if err := pc.SyncConn(ctx); err != nil {
		pc.Close(context.Background())
		return nil, err
	}
	hc, err := pc.Hijack()
	if err != nil {
		pc.Close(context.Background())
		return nil, err
	}
	now := time.Now()
	// The socket is a rawIO (rawDial), under pgconn's TLS when the server
	// speaks it.
	var raw *rawIO
	tlsUp := false
	switch c := hc.Conn.(type) {
	case *rawIO:
		raw = c
	case *tls.Conn:
		raw, _ = c.NetConn().(*rawIO)
		tlsUp = true
	}
	s := &serverConn{
		pool:    p,
		conn:    hc.Conn,
		rio:     hc.Conn,
		raw:     raw,
		tls:     tlsUp,
		r:       bufio.NewReaderSize(hc.Conn, serverBufSize),
		w:       bufio.NewWriterSize(hc.Conn, serverBufSize),
		pid:     hc.PID,
		secret:  hc.SecretKey,
		params:  hc.ParameterStatuses,
		created: now,
	}
	if s.params == nil {
		s.params = make(map[string]string)
	}
	s.sig = paramsSig(s.params)
	return s, nil
}

// rawDial wraps a dialer so that the sockets of server connections are
// rawIOs, which an event loop can own (newRawIO): pgconn's TLS, when the
// server speaks it, then runs above the rawIO.
func rawDial(dial pgconn.DialFunc, bridged bool) pgconn.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return newRawIO(nc, bridged), nil
	}
}

// connectServer logs cfg's user in to the server. Without a password in
// cfg, the secret the authenticator holds for the user (an md5 hash, or a
// SCRAM verifier with a client's ClientKey) answers the server's challenge;
// a challenge it cannot answer is a serverAuthError.
func connectServer(ctx context.Context, cfg *pgconn.Config, a *authenticator) (*pgconn.PgConn, error) {
	var relayErr func() error
	if cfg.Password == "" && a != nil {
		if creds := a.serverCreds(cfg.User); creds.password != "" {
			cfg.Password = creds.password
		} else {
			relayErr = passThrough(cfg, cfg.User, creds)
		}
	}
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		if relayErr != nil {
			if rerr := relayErr(); rerr != nil {
				return nil, rerr
			}
		}
		return nil, err
	}
	return pc, nil
}

// close closes the connection without a Terminate message.
func (s *serverConn) close() { s.conn.Close() }

// backendExitWait bounds how long terminate waits for a backend to exit
// (Proxy.exitWait).
const backendExitWait = time.Second

// terminateMsg is the protocol's Terminate message.
var terminateMsg = []byte{'X', 0, 0, 0, 4}

// terminate ends the server's session and calls gone, on a goroutine of
// its own, once PostgreSQL no longer counts the backend: it sends
// Terminate and waits for the end of the stream before it closes the
// socket. A backend leaves pg_stat_activity and the count of connections
// before its process exits, and only the exit closes its socket
// (PostgreSQL's socket_close leaves the socket open for that, so that a
// client can close synchronously); a slot gone frees is therefore not
// taken by a new server while PostgreSQL still counts the old one. The
// wait is bounded by backendExitWait (a backend busy with a query reads
// nothing), and a socket closed already is not waited on. The caller owns
// s.
func (s *serverConn) terminate(gone func()) {
	r := s.raw
	if r.closed {
		// Nothing to wait on (and the number of a closed raw
		// descriptor is not to be taken out of an epoll set).
		gone()
		return
	}
	wait := time.Duration(s.pool.proxy.exitWait.Load())
	go func() {
		// The wait is the runtime poller's, not an event loop's; taking
		// a bridged socket back may wait for its writer (bridge.stop).
		s.leaveLoop()
		if r.conn() == nil {
			gone() // toRuntime failed, and closed the socket
			return
		}
		s.conn.SetDeadline(time.Now().Add(wait))
		_, err := s.conn.Write(terminateMsg)
		if err == nil {
			io.Copy(io.Discard, s.conn)
		}
		s.close()
		gone()
	}()
}

// alive reports whether an idle server still looks usable: nothing
// buffered and nothing readable on the socket (a terminated backend sends
// a FATAL error and closes its end).
func (s *serverConn) alive() bool {
	if s.r.Buffered() > 0 {
		return false
	}
	if r := s.raw; r.nb || r.br != nil {
		return r.peekAlive()
	}
	nc := s.conn
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := true
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK:
		case rerr != nil || n == 0 || n > 0:
			alive = false
		}
		return true
	})
	return err == nil && alive
}

// cancelAddress returns the network and address of the server a pool
// connects to, for cancel requests.
func cancelAddress(cfg *pgconn.Config) (network, addr string) {
	if strings.HasPrefix(cfg.Host, "/") {
		return "unix", filepath.Join(cfg.Host, ".s.PGSQL."+strconv.Itoa(int(cfg.Port)))
	}
	return "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

// releasePending marks serverConn.cancels: s went back while cancel
// requests for it were under way.
const releasePending = 1 << 30

// cancelStarted counts a cancel request for s, attached to its client
// (the client's loop only).
func (s *serverConn) cancelStarted() { s.cancels.Add(1) }

// cancelDone counts a cancel request for s as taken by PostgreSQL; the
// last one gives s back if it was released meanwhile.
func (s *serverConn) cancelDone() {
	if s.cancels.Add(-1) == releasePending {
		s.cancels.Store(0)
		s.pool.putBack(s, reuse)
	}
}

// holdForCancels reports whether a release of s must wait for cancel
// requests under way (they give it back: cancelDone).
func (s *serverConn) holdForCancels() bool {
	for {
		v := s.cancels.Load()
		if v == 0 {
			return false
		}
		if s.cancels.CompareAndSwap(v, v|releasePending) {
			return true
		}
	}
}

// sendCancel asks PostgreSQL to cancel whatever the server is running.
func (s *serverConn) sendCancel() error {
	network, addr := cancelAddress(s.pool.proxy.upstream)
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.Dial(network, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 12, 12+len(s.secret))
	binary.BigEndian.PutUint32(buf[0:], uint32(12+len(s.secret)))
	binary.BigEndian.PutUint32(buf[4:], codeCancelRequest)
	binary.BigEndian.PutUint32(buf[8:], s.pid)
	buf = append(buf, s.secret...)
	if _, err := c.Write(buf); err != nil {
		return err
	}
	// The server closes the connection once it has handled the request.
	_, _ = io.Copy(io.Discard, c)
	return nil
}

// paramsSQL appends to q the SET commands that make the server's tracked
// parameters equal to want: those the server has otherwise, and those
// that sets (run before them in the same query) name, so that the
// client's value is the one in force after them.
func (s *serverConn) paramsSQL(q *strings.Builder, want map[string]string, sets []engine.Setting) {
	for _, k := range engine.TrackedParams {
		v, ok := want[k]
		if !ok {
			continue
		}
		named := false
		for _, st := range sets {
			named = named || strings.EqualFold(st.Name, k)
		}
		if s.params[k] == v && !named {
			continue
		}
		fmt.Fprintf(q, "SET %s TO %s;", k, engine.QuoteLiteral(v))
	}
}

// runInternal runs a simple Query of the pooler's own on a server it owns
// exclusively and consumes the responses: it returns the columns of the
// first row as text (NULL as ""), keeps the server's parameters current,
// and returns the first error the server sent.
func (s *serverConn) runInternal(sql string) ([]string, error) {
	s.eng.SimpleQuery()
	if err := writeQuery(s.w, sql); err != nil {
		return nil, err
	}
	if err := s.w.Flush(); err != nil {
		return nil, err
	}
	var row []string
	var firstErr error
	for {
		typ, body, err := readSmallMessage(s.r)
		if err != nil {
			return nil, err
		}
		if s.internalAnswer(typ, body, &row, &firstErr) {
			return row, firstErr
		}
	}
}

// errBadInternalAnswer is a malformed answer to a query of the pooler's
// own.
var errBadInternalAnswer = errors.New("malformed answer to a query of the pooler's own")

// internalAnswer takes one message of the answer to a query of the
// pooler's own: it keeps the server's parameters, the first data row (row
// may be nil) and the first error; it reports the ReadyForQuery that ends
// the answer. Both readers of such answers use it (runInternal, which
// blocks, at login in session mode; an event loop's queryAnswers).
func (s *serverConn) internalAnswer(typ byte, body []byte, row *[]string, firstErr *error) bool {
	switch typ {
	case 'S':
		if name, value, ok := parseParameterStatus(body); ok {
			s.params[name] = value
		}
	case 'D':
		if row != nil && *row == nil {
			*row = parseDataRow(body)
		}
	case 'E':
		if *firstErr == nil {
			*firstErr = &serverError{body: append([]byte(nil), body...)}
		}
	case 'Z':
		s.sig = paramsSig(s.params)
		return true
	}
	return false
}

// parseDataRow decodes a DataRow body into text values.
func parseDataRow(body []byte) []string {
	if len(body) < 2 {
		return nil
	}
	n := int(binary.BigEndian.Uint16(body))
	body = body[2:]
	row := make([]string, 0, n)
	for i := 0; i < n && len(body) >= 4; i++ {
		l := int(int32(binary.BigEndian.Uint32(body)))
		body = body[4:]
		if l < 0 || l > len(body) {
			row = append(row, "")
			continue
		}
		row = append(row, string(body[:l]))
		body = body[l:]
	}
	return row
}

// serverError is an ErrorResponse a server sent to the pooler itself.
type serverError struct{ body []byte }

func (e *serverError) Error() string {
	fields := parseErrorFields(e.body)
	return fmt.Sprintf("server error %s: %s", fields['C'], fields['M'])
}

// parseErrorFields decodes the fields of an ErrorResponse body.
func parseErrorFields(body []byte) map[byte]string {
	f := make(map[byte]string)
	for len(body) > 1 && body[0] != 0 {
		t := body[0]
		i := strings.IndexByte(string(body[1:]), 0)
		if i < 0 {
			break
		}
		f[t] = string(body[1 : 1+i])
		body = body[2+i:]
	}
	return f
}

// writeQuery writes a simple Query message.
func writeQuery(w *bufio.Writer, sql string) error {
	var h [5]byte
	h[0] = 'Q'
	binary.BigEndian.PutUint32(h[1:], uint32(4+len(sql)+1))
	w.Write(h[:])
	w.WriteString(sql)
	return w.WriteByte(0)
}

// maxSmallMessage bounds messages the pooler reads whole from a server
// for itself.
const maxSmallMessage = 1 << 20

// readSmallMessage reads one whole message; the body is valid until the
// next read from r.
func readSmallMessage(r *bufio.Reader) (byte, []byte, error) {
	h, err := r.Peek(headerLen)
	if err != nil {
		return 0, nil, err
	}
	typ, n, err := engine.ParseHeader(h, maxSmallMessage)
	if err != nil {
		return 0, nil, err
	}
	r.Discard(headerLen)
	if n > r.Size() {
		body := make([]byte, n)
		_, err := io.ReadFull(r, body)
		return typ, body, err
	}
	body, err := r.Peek(n)
	if err != nil {
		return 0, nil, err
	}
	r.Discard(n)
	return typ, body, nil
}

// parseParameterStatus decodes a ParameterStatus body.
func parseParameterStatus(body []byte) (name, value string, ok bool) {
	i := strings.IndexByte(string(body), 0)
	if i < 0 {
		return "", "", false
	}
	rest := body[i+1:]
	j := strings.IndexByte(string(rest), 0)
	if j < 0 {
		return "", "", false
	}
	return string(body[:i]), string(rest[:j]), true
}

// isRetryableConnectError reports whether a failed server login is worth
// retrying while the client waits: the server is unreachable, starting up,
// shutting down or out of connections. Authentication and configuration
// errors are reported to the client at once.
func isRetryableConnectError(err error) bool {
	if isServerAuthError(err) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P03", "57P01", "57P02", "53300", "08006", "08001":
			return true
		}
		return false
	}
	return true
}
