//go:build linux

// Command evloop is an experiment, not part of pgpoolcheck: the smallest
// transaction pooler written as an epoll event loop over raw file
// descriptors, to measure what that design would gain over pgpoolcheck's
// goroutine-per-connection relay before anyone rewrites the relay for it
// (its figures are in the git history of BENCHMARKS.md; the design it led
// to is docs/design-event-loop.md).
//
// It does only what `pgbench -S` needs: trust login as any user (the
// ParameterStatus of the first server connection is replayed to every
// client), a fixed pool of server connections logged in at start, and
// transaction pooling that releases a server at ReadyForQuery 'I' once
// every Query and Sync it carried is answered. No authentication, no
// cancel, no prepared-statement rewriting, no COPY, no error handling
// beyond closing a client that leaves: never run it for anything but a
// benchmark.
//
// Each loop owns an epoll set, a listening socket (SO_REUSEPORT, so the
// kernel spreads new clients over the loops) and pool/loops servers:
// a client only ever gets a server of its own loop.
//
//	go run ./scripts/evloop -port 25600 -loops 2 -pool 20 -upstream /tmp/pg/.s.PGSQL.5432
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"runtime"
	"syscall"
)

var (
	listenPort = flag.Int("port", 25600, "listen on 127.0.0.1:`port`")
	upstream   = flag.String("upstream", "127.0.0.1:5432", "PostgreSQL as `host:port`, or the path of its unix socket")
	user       = flag.String("user", "postgres", "server login `user` (trust authentication only)")
	database   = flag.String("database", "postgres", "server `database`")
	poolSize   = flag.Int("pool", 20, "server connections in all")
	loops      = flag.Int("loops", 2, "event loops (and GOMAXPROCS)")
	edge       = flag.Bool("edge", true, "edge-triggered epoll, reading until a short read; false: level-triggered, one read per event")
)

const soReusePort = 0xf // SO_REUSEPORT on Linux

type conn struct {
	fd      int
	client  bool
	started bool   // client: startup done
	waiting bool   // client: in the loop's wait queue
	in      []byte // bytes read and not yet relayed
	out     []byte // bytes the socket did not take yet
	peer    *conn  // the attached server or client
	syncs   int    // server: Query and Sync messages not answered yet
}

type loop struct {
	ep     int
	conns  map[int]*conn
	idle   []*conn
	waitq  []*conn
	params []byte // ParameterStatus messages replayed to clients
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	runtime.GOMAXPROCS(*loops)
	per := *poolSize / *loops
	if per < 1 {
		log.Fatal("evloop: -pool must be at least -loops")
	}
	for range *loops {
		l := &loop{conns: map[int]*conn{}}
		var err error
		if l.ep, err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
			log.Fatal(err)
		}
		for range per {
			fd, params, err := login()
			if err != nil {
				log.Fatalf("evloop: server login: %v", err)
			}
			l.params = params
			s := &conn{fd: fd}
			l.watch(s)
			l.idle = append(l.idle, s)
		}
		lfd, err := listenFD()
		if err != nil {
			log.Fatalf("evloop: listen: %v", err)
		}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(lfd)}
		if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, lfd, &ev); err != nil {
			log.Fatal(err)
		}
		go func() {
			runtime.LockOSThread()
			l.run(lfd)
		}()
	}
	fmt.Fprintln(os.Stderr, "evloop: ready")
	select {}
}

// login opens a server connection, logs in with trust authentication and
// returns its descriptor in non-blocking mode with the server's
// ParameterStatus messages.
func login() (int, []byte, error) {
	network := "tcp"
	if (*upstream)[0] == '/' {
		network = "unix"
	}
	c, err := net.Dial(network, *upstream)
	if err != nil {
		return -1, nil, err
	}
	f, err := c.(interface{ File() (*os.File, error) }).File()
	c.Close()
	if err != nil {
		return -1, nil, err
	}
	fd, err := syscall.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		return -1, nil, err
	}
	body := binary.BigEndian.AppendUint32(nil, 196608)
	body = append(body, "user\x00"+*user+"\x00database\x00"+*database+"\x00\x00"...)
	msg := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
	if _, err := syscall.Write(fd, append(msg, body...)); err != nil {
		return -1, nil, err
	}
	var params, buf []byte
	tmp := make([]byte, 4096)
	for {
		n, err := syscall.Read(fd, tmp)
		if err != nil || n == 0 {
			return -1, nil, fmt.Errorf("login read: %v", err)
		}
		buf = append(buf, tmp[:n]...)
		for len(buf) >= 5 {
			m := 1 + int(binary.BigEndian.Uint32(buf[1:5]))
			if len(buf) < m {
				break
			}
			switch buf[0] {
			case 'S':
				params = append(params, buf[:m]...)
			case 'E':
				return -1, nil, fmt.Errorf("server error: %q", buf[5:m])
			case 'Z':
				return fd, params, syscall.SetNonblock(fd, true)
			}
			buf = buf[m:]
		}
	}
}

func listenFD() (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, soReusePort, 1)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: *listenPort, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return -1, err
	}
	return fd, syscall.Listen(fd, 4096)
}

func (l *loop) watch(c *conn) {
	l.conns[c.fd] = c
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(c.fd)}
	if *edge {
		// EPOLLOUT too: with edge triggering it fires only when a full
		// socket drains, so it never needs switching on and off.
		ev.Events |= syscall.EPOLLOUT | syscall.EPOLLET&0xffffffff // EPOLLET is negative in package syscall
	}
	if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		log.Fatal(err)
	}
}

func (l *loop) forget(c *conn) {
	syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, c.fd, nil)
	syscall.Close(c.fd)
	delete(l.conns, c.fd)
}

// closeClient closes a client; a server it leaves mid-transaction is
// replaced rather than cleaned.
func (l *loop) closeClient(c *conn) {
	l.forget(c)
	if s := c.peer; s != nil {
		l.forget(s)
		fd, _, err := login()
		if err != nil {
			log.Fatalf("evloop: server login: %v", err)
		}
		ns := &conn{fd: fd}
		l.watch(ns)
		l.giveServer(ns)
	}
}

// write sends b, keeping what the socket does not take for EPOLLOUT.
func (l *loop) write(c *conn, b []byte) {
	if len(c.out) == 0 {
		n, err := syscall.Write(c.fd, b)
		if err == nil && n == len(b) {
			return
		}
		b = b[max(n, 0):]
		if !*edge {
			ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP, Fd: int32(c.fd)}
			syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_MOD, c.fd, &ev)
		}
	}
	c.out = append(c.out, b...)
}

// giveServer hands s to the first waiting client, or to the idle list.
func (l *loop) giveServer(s *conn) {
	for len(l.waitq) > 0 {
		c := l.waitq[0]
		l.waitq = l.waitq[1:]
		if l.conns[c.fd] != c {
			continue // left while waiting
		}
		c.waiting = false
		c.peer, s.peer = s, c
		l.clientInput(c)
		return
	}
	s.peer = nil
	l.idle = append(l.idle, s)
}

// clientInput answers the startup packet, then relays the client's whole
// messages to its server, attaching one first.
func (l *loop) clientInput(c *conn) {
	for !c.started && len(c.in) >= 8 {
		n := int(binary.BigEndian.Uint32(c.in))
		if n < 8 || len(c.in) < n {
			return
		}
		code := binary.BigEndian.Uint32(c.in[4:8])
		c.in = c.in[n:]
		if code == 80877103 { // SSLRequest
			l.write(c, []byte{'N'})
			continue
		}
		c.started = true
		out := []byte{'R', 0, 0, 0, 8, 0, 0, 0, 0}
		out = append(out, l.params...)
		out = append(out, 'K', 0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 2, 'Z', 0, 0, 0, 5, 'I')
		l.write(c, out)
	}
	if !c.started {
		return
	}
	end, syncs := 0, 0
	for len(c.in)-end >= 5 {
		n := 1 + int(binary.BigEndian.Uint32(c.in[end+1:]))
		if len(c.in)-end < n {
			break
		}
		switch c.in[end] {
		case 'Q', 'S':
			syncs++
		case 'X':
			l.closeClient(c)
			return
		}
		end += n
	}
	if end == 0 {
		return
	}
	if c.peer == nil {
		if len(l.idle) == 0 {
			if !c.waiting {
				c.waiting = true
				l.waitq = append(l.waitq, c)
			}
			return
		}
		s := l.idle[len(l.idle)-1]
		l.idle = l.idle[:len(l.idle)-1]
		c.peer, s.peer = s, c
	}
	s := c.peer
	s.syncs += syncs
	l.write(s, c.in[:end])
	c.in = c.in[:copy(c.in, c.in[end:])]
}

// serverInput relays the server's whole messages to its client and
// releases the server at the ReadyForQuery that ends its work.
func (l *loop) serverInput(s *conn) {
	end, release := 0, false
	for len(s.in)-end >= 5 {
		n := 1 + int(binary.BigEndian.Uint32(s.in[end+1:]))
		if len(s.in)-end < n {
			break
		}
		if s.in[end] == 'Z' {
			s.syncs--
			release = s.syncs <= 0 && s.in[end+5] == 'I'
		}
		end += n
	}
	if end == 0 {
		return
	}
	c := s.peer
	if c != nil {
		l.write(c, s.in[:end])
	}
	s.in = s.in[:copy(s.in, s.in[end:])]
	if release {
		s.syncs = 0
		if c != nil {
			c.peer = nil
		}
		l.giveServer(s)
		if c != nil && len(c.in) > 0 {
			l.clientInput(c)
		}
	}
}

func (l *loop) run(lfd int) {
	events := make([]syscall.EpollEvent, 256)
	buf := make([]byte, 65536)
	for {
		n, err := syscall.EpollWait(l.ep, events, -1)
		if err != nil {
			continue // EINTR
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			if fd == lfd {
				for {
					nfd, _, err := syscall.Accept4(lfd, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
					if err != nil {
						break
					}
					syscall.SetsockoptInt(nfd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
					l.watch(&conn{fd: nfd, client: true})
				}
				continue
			}
			c := l.conns[fd]
			if c == nil {
				continue
			}
			if ev.Events&syscall.EPOLLOUT != 0 && len(c.out) > 0 {
				if m, _ := syscall.Write(fd, c.out); m > 0 {
					c.out = c.out[:copy(c.out, c.out[m:])]
				}
				if len(c.out) == 0 && !*edge {
					ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(fd)}
					syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_MOD, fd, &ev)
				}
			}
			if ev.Events&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) == 0 {
				continue
			}
			// Level-triggered: one read, epoll reports the rest. Edge-
			// triggered: read until a short read (the socket was empty
			// then; data arriving later is a new edge).
			closed := false
			for {
				m, err := syscall.Read(fd, buf)
				if m <= 0 {
					closed = err != syscall.EAGAIN
					break
				}
				c.in = append(c.in, buf[:m]...)
				if !*edge || m < len(buf) {
					break
				}
			}
			if closed {
				if !c.client {
					log.Fatalf("evloop: server connection lost")
				}
				l.closeClient(c)
				continue
			}
			if c.client {
				l.clientInput(c)
			} else {
				l.serverInput(c)
			}
		}
	}
}
