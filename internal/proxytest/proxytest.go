// Package proxytest starts pgpoolcheck's pooler for the tests of other
// packages: on a free loopback port in 21000–29999 (below the kernel's
// ephemeral range, where ports can fail to bind after heavy traffic).
// The pooler package's own tests have their own helper, since they
// cannot import this one.
package proxytest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/pgpoolcheck/pgpoolcheck/pooler"
)

// Listen makes a proxy with cfg (its Listen is set here) and has it
// listen on a free port, trying another port while the one picked is in
// use. It fails the test when the proxy cannot be made or no port works.
func Listen(t testing.TB, cfg pooler.Config) (*pooler.Proxy, int) {
	t.Helper()
	var last error
	for range 20 {
		port := 21000 + rand.IntN(9000)
		cfg.Listen = fmt.Sprintf("127.0.0.1:%d", port)
		p, err := pooler.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Listen(); err != nil {
			last = err
			if errors.Is(err, syscall.EADDRINUSE) {
				continue
			}
			t.Fatal(err)
		}
		return p, port
	}
	t.Fatalf("no free port: %v", last)
	return nil, 0
}

// Start is Listen, then serves until the test ends: the cleanup shuts the
// proxy down (giving it stop to finish) and reports an error Serve
// returned, or a proxy that did not stop within stop and 5 s more.
func Start(t testing.TB, cfg pooler.Config, stop time.Duration) (*pooler.Proxy, int) {
	t.Helper()
	p, port := Listen(t, cfg)
	done := make(chan error, 1)
	go func() { done <- p.Serve(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stop)
		defer cancel()
		p.Shutdown(ctx)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("proxy: %v", err)
			}
		case <-time.After(stop + 5*time.Second):
			t.Error("the proxy did not stop")
		}
		if n := p.Snapshot().InvalidMoves; n != 0 {
			t.Errorf("%d client moves refused by the pooler's state machine (see its log)", n)
		}
	})
	return p, port
}
