package pooler

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// listenMetrics opens the metrics listener when Config.MetricsListen and
// MetricsHandler are set.
func (p *Proxy) listenMetrics() error {
	if p.cfg.MetricsListen == "" || p.cfg.MetricsHandler == nil || p.metricsLn != nil {
		return nil
	}
	ln, err := net.Listen("tcp", p.cfg.MetricsListen)
	if err != nil {
		return err
	}
	p.metricsLn = ln
	return nil
}

// MetricsAddr is the metrics listener's address, or nil without one
// (after Listen).
func (p *Proxy) MetricsAddr() net.Addr {
	if p.metricsLn == nil {
		return nil
	}
	return p.metricsLn.Addr()
}

// serveMetrics runs the metrics HTTP server until stopMetrics.
func (p *Proxy) serveMetrics() {
	if p.metricsLn == nil {
		return
	}
	srv := &http.Server{Handler: p.cfg.MetricsHandler(p), ReadHeaderTimeout: 10 * time.Second}
	p.metricsSrv.Store(srv)
	p.log.Info("metrics listening", "listen", p.metricsLn.Addr().String())
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if err := srv.Serve(p.metricsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Warn("metrics server stopped", "err", err)
		}
	}()
}

// stopMetrics shuts the metrics server down.
func (p *Proxy) stopMetrics(ctx context.Context) {
	if srv := p.metricsSrv.Load(); srv != nil {
		srv.Shutdown(ctx)
	} else if p.metricsLn != nil {
		p.metricsLn.Close()
	}
}
