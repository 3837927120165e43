//go:build !linux

package pooler

// Without epoll the goroutine relay does all (evloop.go).

type evLoop struct{}

type loopMsgKind uint8

const (
	msgAdopt loopMsgKind = iota
	msgServer
	msgGrant
	msgExpired
	msgClosed
	msgShutdown
	msgStop
	msgLoggedIn
	msgResumed
)

type loopMsg struct {
	kind loopMsgKind
	c    *clientConn
	s    *serverConn
	err  error
}

type loopQuery struct{}

func (l *evLoop) clean(*clientConn, *serverConn, bool) bool     { return false }
func (l *evLoop) verifyAttached(*clientConn, *serverConn, byte) {}
func (p *Proxy) startLoops(int)                                 {}
func (l *evLoop) post(loopMsg)                                  {}
func (p *Proxy) pickLoop() *evLoop                              { return nil }
func (s *serverConn) leaveLoop()                                {}
func (s *serverConn) lrio() *rawIO                              { return s.raw }
func (r *rawIO) flushBlocking()                                 {}
func (l *evLoop) dropServer(*serverConn)                        {}
func (p *Proxy) loopsStarted() []*evLoop                        { return nil }
