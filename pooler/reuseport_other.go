//go:build !linux

package pooler

import (
	"errors"
	"syscall"
)

// reusePort: SO_REUSEPORT is supported on Linux only.
func reusePort(network, address string, c syscall.RawConn) error {
	return errors.New("so_reuseport is supported on Linux only")
}
