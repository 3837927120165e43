//go:build !linux

package pooler

// Without epoll, an idle client waits on a goroutine of its own
// (clientConn.idle); see idlepoll.go.

type idlePoller struct{}

func (ip *idlePoller) park(*clientConn) bool  { return false }
func (ip *idlePoller) ready() bool            { return false }
func (ip *idlePoller) wakeAll()               {}
func (ip *idlePoller) wakeClient(*clientConn) {}
