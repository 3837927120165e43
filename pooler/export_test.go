package pooler

// ClientsOnLoops counts the clients an event loop holds now.
func ClientsOnLoops(p *Proxy) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for c := range p.clients {
		if c.loop.Load() != nil {
			n++
		}
	}
	return n
}
