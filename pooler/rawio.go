package pooler

import (
	"errors"
	"io"
	"net"
	"syscall"
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
type rawIO struct {
	rc syscall.RawConn
	// nb is set while an event loop owns the socket (evloop.go): a read
	// that finds nothing returns errAgain and a write the socket does not
	// take whole keeps the rest in pend, to be written when the socket
	// is writable again. Once nb is cleared, the next write sends pend
	// first. pend is used under the lock that guards the writer.
	nb   bool
	pend []byte
	// A read and a write may run at once (the client goroutine reads
	// while the pump writes): each has its own state.
	rbuf, wbuf []byte
	rn, wn     int
	rerr, werr error
	readFn     func(fd uintptr) bool
	writeFn    func(fd uintptr) bool
}

// newRawIO returns a raw reader/writer for nc, or nc itself when it has no
// file descriptor of its own (TLS).
func newRawIO(nc net.Conn) io.ReadWriter {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nc
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nc
	}
	r := &rawIO{rc: rc}
	r.readFn = r.doRead
	r.writeFn = r.doWrite
	return r
}

func (r *rawIO) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.rbuf, r.rn, r.rerr = b, 0, nil
	fn := r.readFn
	if r.nb {
		fn = r.readNB
	}
	err := r.rc.Read(fn)
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
	if len(r.pend) > 0 {
		if r.nb {
			r.pend = append(r.pend, b...)
			return len(b), nil
		}
		if _, err := r.write(r.pend, r.writeFn); err != nil {
			return 0, err
		}
		r.pend = nil
	}
	if !r.nb {
		return r.write(b, r.writeFn)
	}
	n, err := r.write(b, r.writeNB)
	if err != nil {
		return n, err
	}
	if n < len(b) {
		r.pend = append(r.pend, b[n:]...)
	}
	return len(b), nil
}

func (r *rawIO) write(b []byte, fn func(uintptr) bool) (int, error) {
	r.wbuf, r.wn, r.werr = b, 0, nil
	err := r.rc.Write(fn)
	n := r.wn
	r.wbuf = nil
	if err != nil {
		return n, err
	}
	return n, r.werr
}

// errAgain is a read in nb mode that found nothing to read.
var errAgain = errors.New("no data ready")

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
	if len(r.pend) == 0 {
		return false, nil
	}
	n, err := r.write(r.pend, r.writeNB)
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
