package pooler

import (
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
	err := r.rc.Read(r.readFn)
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
	r.wbuf, r.wn, r.werr = b, 0, nil
	err := r.rc.Write(r.writeFn)
	n := r.wn
	r.wbuf = nil
	if err != nil {
		return n, err
	}
	return n, r.werr
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
