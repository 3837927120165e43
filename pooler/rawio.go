package pooler

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// rawIO reads and writes a socket with raw system calls inside
// syscall.RawConn's Read and Write, which wait on the runtime's network
// poller when the socket is not ready. The runtime's own path (net.Conn)
// marks every read and write as a system call; a write to a loopback
// socket does the receiver's work too and often runs past the 20 µs after
// which the runtime's monitor hands the processor to another thread,
// waking one up each time. The relay's sockets are non-blocking, so a
// raw call never blocks; it just keeps its processor.
//
// A rawIO is also the connection's net.Conn (clientConn.conn,
// serverConn.conn), because an event loop takes the socket out of the
// runtime's poller while it owns it (toRaw): the runtime's net.Conn is
// closed then and the socket lives on as a duplicate descriptor, fd, until
// toRuntime makes a new net.Conn of it.
//
// A rawIO has no lock: its connection's owner (a login or console
// goroutine, with pgconn's reader beside it while a server logs in; an
// event loop; the goroutine that terminates a server) alone reads, writes,
// changes its mode and closes it, so its descriptor cannot be closed, and
// its number reused, under a call in progress. Others post
// to the owner (msgKill, msgReport). The exceptions read what never
// changes: the addresses, and a socket no loop ever takes (a console
// client's), whose runtime connection or bridge is safe for concurrent use
// (shutdownRead, abort, connFD).
type rawIO struct {
	rc syscall.RawConn
	// nb is set while an event loop owns the socket (evloop.go), which is
	// when the socket is raw (fd): a read that finds nothing returns
	// errAgain and a write the socket does not take whole keeps the rest
	// in pend, to be written when the socket is writable again. Once nb is
	// cleared, the next write sends pend first. pend is used under the
	// lock that guards the writer.
	nb   bool
	pend []byte
	// nc is the runtime's connection (nil while raw), fd the raw
	// descriptor.
	nc     net.Conn
	fd     int
	closed bool
	// raddr and laddr are the peer's address and the socket's own, kept
	// from the start (a client's laddr is shared with the clients that
	// came to the same address: Proxy.localAddr).
	raddr, laddr net.Addr
	// A read and a write may run at once (a goroutine's blocking read
	// while the loop writes, at login): each has its own state.
	rbuf, wbuf []byte
	rn, wn     int
	rerr, werr error
	// br moves the bytes of a socket the loop cannot watch itself
	// (bridge.go); fd is then the bridge's token while nb.
	br *bridge
	// pre are bytes read ahead at login that Read returns first (the
	// start of a direct TLS handshake: unread).
	pre []byte
}

// unread makes Read return b before what the socket holds (at login, on
// the goroutine that reads).
func (r *rawIO) unread(b []byte) { r.pre = append(b[:len(b):len(b)], r.pre...) }

// newRawIO returns a raw reader/writer for nc, bridged when nc has no file
// descriptor of its own, or when asked.
func newRawIO(nc net.Conn, bridged bool) *rawIO {
	sc, ok := nc.(syscall.Conn)
	if !ok || bridged || bridgeOnly {
		return newBridgedIO(nc)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return newBridgedIO(nc)
	}
	return &rawIO{rc: rc, nc: nc, fd: -1, raddr: nc.RemoteAddr(), laddr: nc.LocalAddr()}
}

func (r *rawIO) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if len(r.pre) > 0 {
		n := copy(b, r.pre)
		if r.pre = r.pre[n:]; len(r.pre) == 0 {
			r.pre = nil
		}
		return n, nil
	}
	if r.br != nil {
		return r.br.read(b, r.nb)
	}
	r.rbuf, r.rn, r.rerr = b, 0, nil
	var err error
	if r.nb {
		err = r.rawCall(false)
	} else {
		// Blocking reads and writes are the login's and the console's
		// (nb mode calls readNB and writeNB itself: rawCall), so the
		// method value they allocate is not kept per connection.
		err = r.rc.Read(r.doRead)
	}
	r.rbuf = nil
	if err != nil {
		return 0, err
	}
	return r.rn, r.rerr
}

func (r *rawIO) doRead(fd uintptr) bool {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.rbuf[0])), uintptr(len(r.rbuf)))
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return false
		case errno != 0:
			r.rerr = errno
		case n == 0:
			r.rerr = io.EOF
		default:
			r.rn = int(n)
		}
		return true
	}
}

func (r *rawIO) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if r.br != nil {
		return r.br.write(b, r.nb)
	}
	if len(r.pend) > 0 {
		if r.nb {
			r.pend = append(r.pend, b...)
			return len(b), nil
		}
		if _, err := r.write(r.pend); err != nil {
			return 0, err
		}
		r.pend = nil
	}
	if !r.nb {
		return r.write(b)
	}
	w := b
	if k := int(shortWrites.Load()); k > 0 && len(w) > k {
		w = w[:k] // tests: as if the socket took only k bytes
	}
	n, err := r.write(w)
	if err != nil {
		return n, err
	}
	if n < len(b) {
		r.pend = append(r.pend, b[n:]...)
	}
	return len(b), nil
}

// write writes b: in nb mode as far as the socket takes it, otherwise
// waiting for the socket on the runtime's poller.
func (r *rawIO) write(b []byte) (int, error) {
	r.wbuf, r.wn, r.werr = b, 0, nil
	var err error
	if r.nb {
		err = r.rawCall(true)
	} else {
		err = r.rc.Write(r.doWrite)
	}
	n := r.wn
	r.wbuf = nil
	if err != nil {
		return n, err
	}
	return n, r.werr
}

// shortWrites, when positive, makes every nb Write send at most that many
// bytes and keep the rest for later, as a full socket would: tests use it
// to check that the event loop always watches a socket it owes bytes.
var shortWrites atomic.Int64

// errAgain is a read in nb mode that found nothing to read. It is a
// temporary net.Error, so that a tls.Conn above the socket keeps the
// record it has half read and goes on at the next read.
var errAgain error = againError{}

type againError struct{}

func (againError) Error() string   { return "no data ready" }
func (againError) Timeout() bool   { return true }
func (againError) Temporary() bool { return true }

// readNB is doRead for nb mode: it never waits.
func (r *rawIO) readNB(fd uintptr) bool {
	if !r.doRead(fd) {
		r.rerr = errAgain
	}
	return true
}

// writeNB is doWrite for nb mode: it stops when the socket is full.
func (r *rawIO) writeNB(fd uintptr) bool {
	r.doWrite(fd)
	return true
}

// flushPend writes what an nb write left over, as far as the socket takes
// it; it reports whether anything is left.
func (r *rawIO) flushPend() (bool, error) {
	if r.br != nil {
		return r.br.pending() > 0, nil
	}
	if len(r.pend) == 0 {
		return false, nil
	}
	n, err := r.write(r.pend)
	if err != nil {
		r.pend = nil
		return false, err
	}
	if n == len(r.pend) {
		r.pend = nil
		return false, nil
	}
	r.pend = append(r.pend[:0], r.pend[n:]...)
	return true, nil
}

func (r *rawIO) doWrite(fd uintptr) bool {
	for r.wn < len(r.wbuf) {
		rest := r.wbuf[r.wn:]
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			return false
		case errno != 0:
			r.werr = errno
			return true
		}
		r.wn += int(n)
	}
	return true
}

// rawCall runs writeNB (write) or readNB on the raw descriptor (nb
// mode), unless the connection was closed.
func (r *rawIO) rawCall(write bool) error {
	if r.closed {
		return net.ErrClosed
	}
	if write {
		r.writeNB(uintptr(r.fd))
	} else {
		r.readNB(uintptr(r.fd))
	}
	return nil
}

// toRaw takes the socket out of the runtime's poller for an event loop:
// the runtime's connection is closed, a duplicate descriptor keeps the
// socket, and reads and writes no longer wait (nb). It returns the
// descriptor.
func (r *rawIO) toRaw() (int, error) {
	if r.closed {
		return -1, net.ErrClosed
	}
	if r.nb {
		return r.fd, nil
	}
	if r.br != nil {
		r.br.mu.Lock()
		r.br.start()
		r.br.mu.Unlock()
		r.fd, r.nb = int(r.br.token), true
		return r.fd, nil
	}
	fd, derr := -1, error(nil)
	if err := r.rc.Control(func(f uintptr) {
		n, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f, syscall.F_DUPFD_CLOEXEC, 0)
		if errno != 0 {
			derr = errno
			return
		}
		fd = int(n)
	}); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, derr
	}
	// The duplicate shares the original's non-blocking mode; closing the
	// original takes it out of the runtime's poller.
	r.nc.Close()
	r.nc, r.rc, r.fd, r.nb = nil, nil, fd, true
	return fd, nil
}

// toBridge makes a raw socket a bridged one (take): what nb writes left
// over is written first.
func (r *rawIO) toBridge() (int, error) {
	if err := r.toRuntime(); err != nil {
		return -1, err
	}
	r.br = newBridge(r.nc)
	r.br.out, r.pend = r.pend, nil
	r.nc, r.rc = nil, nil
	return r.toRaw()
}

// shutdownRead shuts the socket's read side (its reads return the end of
// the stream, in whichever mode); writes still work. Its owner calls it,
// or anyone for a socket no loop takes: a bridge or a runtime connection
// looks after its own close.
func (r *rawIO) shutdownRead() error {
	switch {
	case r.br != nil:
		r.br.shutRead()
		return nil
	case r.nb:
		if r.closed {
			return net.ErrClosed
		}
		return syscall.Shutdown(r.fd, syscall.SHUT_RD)
	case r.nc == nil:
		return net.ErrClosed
	}
	if tc, ok := r.nc.(interface{ CloseRead() error }); ok {
		return tc.CloseRead()
	}
	return errors.ErrUnsupported
}

// abort closes a socket no loop takes (a console client's) from another
// goroutine: its owner's reads and writes fail, and its own Close later
// finds the runtime connection or the bridge closed.
func (r *rawIO) abort() {
	switch {
	case r.br != nil:
		r.br.close()
	case r.nc != nil:
		r.nc.Close()
	}
}

// toRuntime gives the socket back to the runtime (a new net.Conn of the
// raw descriptor, which is closed): reads and writes wait again. The
// caller has taken the descriptor out of any epoll set of its own.
func (r *rawIO) toRuntime() error {
	if !r.nb {
		return nil
	}
	r.nb = false
	if r.closed {
		return net.ErrClosed
	}
	if r.br != nil {
		r.fd = -1
		r.br.stop()
		return nil
	}
	f := os.NewFile(uintptr(r.fd), "socket")
	nc, err := net.FileConn(f)
	f.Close()
	r.fd = -1
	if err == nil {
		var rc syscall.RawConn
		if rc, err = nc.(syscall.Conn).SyscallConn(); err == nil {
			r.nc, r.rc = nc, rc
			return nil
		}
		nc.Close()
	}
	r.closed = true
	return err
}

// Close closes the connection, raw or not.
func (r *rawIO) Close() error {
	if r.closed {
		return net.ErrClosed
	}
	r.closed = true
	switch {
	case r.br != nil:
		return r.br.close()
	case r.nb:
		return syscall.Close(r.fd)
	case r.nc == nil:
		return net.ErrClosed
	}
	return r.nc.Close()
}

// LocalAddr returns the socket's own address.
func (r *rawIO) LocalAddr() net.Addr { return r.laddr }

func (r *rawIO) RemoteAddr() net.Addr { return r.raddr }

// conn returns the runtime's connection, or nil while the socket is raw.
func (r *rawIO) conn() net.Conn {
	if r.br != nil && !r.nb {
		return r.br.nc
	}
	return r.nc
}

// pending returns what nb writes left to be written.
func (r *rawIO) pending() int {
	if r.br != nil {
		return r.br.pending()
	}
	return len(r.pend)
}

// The deadlines apply to the runtime's connection; a raw socket never
// waits.
func (r *rawIO) SetDeadline(t time.Time) error {
	if nc := r.conn(); nc != nil {
		return nc.SetDeadline(t)
	}
	return nil
}

func (r *rawIO) SetReadDeadline(t time.Time) error {
	if nc := r.conn(); nc != nil {
		return nc.SetReadDeadline(t)
	}
	return nil
}

func (r *rawIO) SetWriteDeadline(t time.Time) error {
	if nc := r.conn(); nc != nil {
		return nc.SetWriteDeadline(t)
	}
	return nil
}

// errRaw is SyscallConn of a socket an event loop owns.
var errRaw = errors.New("socket owned by an event loop")

// SyscallConn returns the runtime connection's raw access (alive); a raw
// or bridged socket has none.
func (r *rawIO) SyscallConn() (syscall.RawConn, error) {
	if r.br != nil {
		return nil, errRaw
	}
	if nc := r.conn(); nc != nil {
		return nc.(syscall.Conn).SyscallConn()
	}
	return nil, errRaw
}

// peekAlive reports, for a raw socket, whether nothing is readable (a
// terminated backend sends a FATAL error and closes its end).
func (r *rawIO) peekAlive() bool {
	if r.closed {
		return false
	}
	if r.br != nil {
		return r.br.alive()
	}
	var b [1]byte
	_, _, err := syscall.Recvfrom(r.fd, b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
}

var _ net.Conn = (*rawIO)(nil)
