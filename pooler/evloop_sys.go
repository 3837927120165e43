//go:build linux

package pooler

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// loopSys is a loop's epoll set: ep, with an eventfd (efd) that wakes the
// loop for its inbox.
type loopSys struct {
	ep  int
	efd int
	// file holds ep for the runtime's poller; rc waits on it.
	file   *os.File
	rc     syscall.RawConn
	events []syscall.EpollEvent
	// poll is pollOnce bound once (a closure made at each wait would be
	// allocated each time); n and werr are what it found.
	poll func(fd uintptr) bool
	n    int
	werr error
}

// pollOnce takes the ready events without waiting: false (nothing ready)
// makes rc.Read wait on the runtime's poller and call it again.
func (y *loopSys) pollOnce(fd uintptr) bool {
	y.n, y.werr = epollPoll(int(fd), y.events)
	return y.n > 0 || y.werr != nil && y.werr != syscall.EINTR
}

// bridgeOnly: every connection is bridged (newRawIO); here only those
// without a descriptor of their own.
const bridgeOnly = false

// epollIn is what the loop watches a socket for: edge-triggered input.
const epollIn = syscall.EPOLLIN | syscall.EPOLLRDHUP | 1<<31

func (y *loopSys) init() error {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	const efdCloexec, efdNonblock = 0x80000, 0x800
	efd, _, errno := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, efdCloexec|efdNonblock, 0)
	if errno != 0 {
		syscall.Close(ep)
		return errno
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(efd)}
	if err := epollCtl(ep, syscall.EPOLL_CTL_ADD, int(efd), &ev); err != nil {
		syscall.Close(ep)
		syscall.Close(int(efd))
		return err
	}
	// The loop waits for its epoll set in the runtime's network poller
	// (an epoll set is itself pollable), not in a blocking epoll_wait: a
	// goroutine blocked in a system call has its processor taken away
	// and, once it returns, is preempted and moved between threads.
	if err := syscall.SetNonblock(ep, true); err != nil {
		syscall.Close(ep)
		syscall.Close(int(efd))
		return err
	}
	f := os.NewFile(uintptr(ep), "evloop")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		syscall.Close(int(efd))
		return err
	}
	*y = loopSys{ep: ep, efd: int(efd), file: f, rc: rc, events: make([]syscall.EpollEvent, 256)}
	y.poll = y.pollOnce
	return nil
}

func (y *loopSys) close() {
	y.file.Close()
	syscall.Close(y.efd)
}

// wake makes the loop look at its inbox.
func (l *evLoop) wake() {
	one := uint64(1)
	rawWrite(l.sys.efd, (*[8]byte)(unsafe.Pointer(&one))[:])
}

// wait waits for the epoll set (the inbox's eventfd among its sockets) and
// handles the sockets' events.
func (l *evLoop) wait() error {
	y := &l.sys
	y.n, y.werr = 0, nil
	err := y.rc.Read(y.poll)
	if err == nil {
		err = y.werr
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.awake = true
	l.mu.Unlock()
	l.now = time.Now()
	for _, ev := range y.events[:y.n] {
		fd := ev.Fd
		if int(fd) == y.efd {
			var b [8]byte
			rawRead(y.efd, b[:])
			continue
		}
		l.event(fd, ev.Events)
	}
	return nil
}

// The loop's system calls never block (epoll_pwait with a zero timeout,
// epoll_ctl, and eventfd reads and writes on a non-blocking eventfd), so
// they are made raw: through syscall.Syscall the runtime would mark the
// goroutine's P as in a system call, and every such entry wakes the
// runtime's sysmon thread when it sleeps. Measured at 10 clients, that
// alone made sysmon switch in about 4000 times a second.

// modify sets what the loop watches fd (rio's) for: input, and output too
// when out.
func (l *evLoop) modify(rio *rawIO, fd int32, out bool) {
	if rio.br != nil {
		rio.br.setOut(l, out)
		return
	}
	ev := syscall.EpollEvent{Events: epollIn, Fd: fd}
	if out {
		ev.Events |= syscall.EPOLLOUT
	}
	epollCtl(l.sys.ep, syscall.EPOLL_CTL_MOD, int(fd), &ev)
}

// add makes the loop watch rio's socket (fd, from toRaw) for input.
func (l *evLoop) add(rio *rawIO, fd int32) error {
	if rio.br != nil {
		rio.br.watch(l)
		return nil
	}
	ev := syscall.EpollEvent{Events: epollIn, Fd: fd}
	return epollCtl(l.sys.ep, syscall.EPOLL_CTL_ADD, int(fd), &ev)
}

// del stops the loop watching rio's socket (fd). It may run on any
// goroutine (leaveLoop).
func (l *evLoop) del(rio *rawIO, fd int32) {
	if rio.br != nil {
		rio.br.watch(nil)
		return
	}
	epollCtl(l.sys.ep, syscall.EPOLL_CTL_DEL, int(fd), nil)
}

// epollPoll returns the ready events of ep without waiting.
func epollPoll(ep int, events []syscall.EpollEvent) (int, error) {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(ep),
		uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// epollCtl is syscall.EpollCtl made raw.
func epollCtl(ep, op, fd int, ev *syscall.EpollEvent) error {
	_, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_CTL, uintptr(ep), uintptr(op), uintptr(fd),
		uintptr(unsafe.Pointer(ev)), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// rawRead and rawWrite are read(2) and write(2) on a non-blocking
// descriptor, made raw; the eventfd's counter is all they move.
func rawRead(fd int, b []byte) {
	syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
}

func rawWrite(fd int, b []byte) {
	syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
}
