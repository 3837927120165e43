package pooler

import "time"

// SetNudgeAfter sets how long a client must be quiet before the pooler
// parks it without a read buffer (idleNudgeAfter), for the tests of
// package pooler_test.
func SetNudgeAfter(p *Proxy, d time.Duration) { p.nudgeAfter.Store(int64(d)) }

// ClientsOnLoops counts the clients an event loop holds now.
func ClientsOnLoops(p *Proxy) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for c := range p.clients {
		if c.inLoop.Load() {
			n++
		}
	}
	return n
}
