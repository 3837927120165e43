//go:build !linux

package pooler

// Without epoll every socket is bridged (bridge.go): a loop learns of its
// sockets' events from their bridges, as of its inbox, and waits on a
// channel.

type loopSys struct {
	wakeup chan struct{}
}

// bridgeOnly: every connection is bridged (newRawIO).
const bridgeOnly = true

func (y *loopSys) init() error {
	y.wakeup = make(chan struct{}, 1)
	return nil
}

func (y *loopSys) close() {}

// wake makes the loop look at its inbox.
func (l *evLoop) wake() {
	select {
	case l.sys.wakeup <- struct{}{}:
	default:
	}
}

// wait waits for the inbox (the bridges' events included).
func (l *evLoop) wait() error {
	<-l.sys.wakeup
	l.mu.Lock()
	l.awake = true
	l.mu.Unlock()
	return nil
}

func (l *evLoop) modify(rio *rawIO, fd int32, out bool) { rio.br.setOut(l, out) }

func (l *evLoop) add(rio *rawIO, fd int32) error {
	rio.br.watch(l)
	return nil
}

func (l *evLoop) del(rio *rawIO, fd int32) { rio.br.watch(nil) }
