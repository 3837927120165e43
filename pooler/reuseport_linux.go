package pooler

import "syscall"

// soReusePort is SO_REUSEPORT on Linux (asm-generic/socket.h), which the
// syscall package does not name.
const soReusePort = 0xf

// reusePort sets SO_REUSEPORT on a listening socket: several pooler
// processes on one machine then listen on the same address, and the
// kernel spreads new connections over them.
func reusePort(network, address string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, soReusePort, 1)
	}); err != nil {
		return err
	}
	return serr
}
