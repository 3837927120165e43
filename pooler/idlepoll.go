//go:build linux

package pooler

import (
	"sync"
	"syscall"
)

// idlePoller holds clients that have been idle for a while without a
// goroutine each: their sockets sit in one epoll set that a single
// goroutine waits on, and a client gets a goroutine (and a read buffer)
// again when its socket becomes readable — as PgBouncer keeps idle clients
// as a few hundred bytes of state. Linux only; elsewhere, or when epoll
// fails, idle clients wait on their own goroutine (clientConn.idle).
type idlePoller struct {
	once sync.Once
	epfd int
	err  error

	mu      sync.Mutex
	clients map[int32]*clientConn
}

// park hands an idle client (no read buffer held, nothing buffered) to the
// poller; it reports false when the client must wait on its own instead.
func (ip *idlePoller) park(c *clientConn) bool {
	ip.once.Do(ip.start)
	if ip.err != nil {
		return false
	}
	sc, ok := c.conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var fd int32 = -1
	if rc.Control(func(f uintptr) { fd = int32(f) }) != nil || fd < 0 {
		return false
	}
	if c.r.Buffered() > 0 {
		return false
	}
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if c.proxy.closing.Load() {
		return false
	}
	// The buffer goes back before the socket is watched: from then on
	// another goroutine may wake the client at any moment.
	c.putReader()
	ip.clients[fd] = c
	c.polledFD = fd
	c.proxy.stats.polledIdle.Add(1)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT, Fd: fd}
	if err := syscall.EpollCtl(ip.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev); err != nil {
		delete(ip.clients, fd)
		c.polledFD = -1
		c.proxy.stats.polledIdle.Add(-1)
		c.getReader()
		return false
	}
	return true
}

// ready reports whether park can work (Linux, epoll available).
func (ip *idlePoller) ready() bool {
	ip.once.Do(ip.start)
	return ip.err == nil
}

// start makes the poller's epoll set (once, at the first park). What it
// sets is written under ip.mu: wakeAll and wakeClient read it under that
// lock without starting the poller, and may run at the same moment.
func (ip *idlePoller) start() {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	ip.mu.Lock()
	ip.epfd, ip.err = ep, err
	if err == nil {
		ip.clients = make(map[int32]*clientConn)
	}
	ip.mu.Unlock()
	if err == nil {
		go ip.loop()
	}
}

// loop wakes the clients whose sockets became readable (data, or the
// client closing). It runs for the life of the process, blocked in
// epoll_wait when nothing happens.
func (ip *idlePoller) loop() {
	events := make([]syscall.EpollEvent, 128)
	for {
		n, err := syscall.EpollWait(ip.epfd, events, -1)
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			return
		}
		for _, ev := range events[:n] {
			if c := ip.take(ev.Fd); c != nil {
				go c.wake()
			}
		}
	}
}

// take removes the client of fd from the set, or returns nil.
func (ip *idlePoller) take(fd int32) *clientConn {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	c := ip.clients[fd]
	if c == nil {
		return nil
	}
	delete(ip.clients, fd)
	c.polledFD = -1
	// The socket may be closed already (the kernel then dropped it from
	// the set): ignore the error.
	syscall.EpollCtl(ip.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil)
	c.proxy.stats.polledIdle.Add(-1)
	return c
}

// wakeAll gives every parked client its goroutine back (shutdown: their
// sockets are being closed, and each must clean up after itself).
func (ip *idlePoller) wakeAll() {
	ip.mu.Lock()
	var cs []*clientConn
	for fd, c := range ip.clients {
		delete(ip.clients, fd)
		c.polledFD = -1
		if ip.epfd > 0 {
			syscall.EpollCtl(ip.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil)
		}
		c.proxy.stats.polledIdle.Add(-1)
		cs = append(cs, c)
	}
	ip.mu.Unlock()
	for _, c := range cs {
		go c.wake()
	}
}

// wakeClient gives a parked client its goroutine back, if it is parked:
// the pooler closes a client's socket from another goroutine (its server
// was lost, shutdown) and the client must still clean up after itself.
func (ip *idlePoller) wakeClient(c *clientConn) {
	ip.mu.Lock()
	fd := c.polledFD
	if fd < 0 || ip.clients[fd] != c {
		ip.mu.Unlock()
		return
	}
	delete(ip.clients, fd)
	c.polledFD = -1
	syscall.EpollCtl(ip.epfd, syscall.EPOLL_CTL_DEL, int(fd), nil)
	c.proxy.stats.polledIdle.Add(-1)
	ip.mu.Unlock()
	go c.wake()
}
