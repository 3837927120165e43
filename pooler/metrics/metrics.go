// Package metrics exposes a pgpoolcheck proxy's figures to Prometheus.
//
// Collector reads Proxy.Snapshot at each scrape and turns it into
// metrics; nothing is instrumented per message. Handler serves a registry
// with the collector (and the Go runtime's and process's collectors) in
// the Prometheus text format; the proxy runs it on Config.MetricsListen
// when Config.MetricsHandler is Handler:
//
//	cfg.MetricsListen, cfg.MetricsHandler = "127.0.0.1:9127", metrics.Handler
//
// Metrics, per pool labelled database and user unless said otherwise:
//
//	pgpoolcheck_pool_clients{state="active|waiting|idle"}   gauge
//	pgpoolcheck_pool_clients_pinned                         gauge
//	pgpoolcheck_pool_servers{state="active|idle|login|used"} gauge
//	pgpoolcheck_pool_servers_pinned                         gauge
//	pgpoolcheck_pool_size, pgpoolcheck_pool_paused          gauge
//	pgpoolcheck_pool_max_wait_seconds                       gauge
//	pgpoolcheck_pool_wait_seconds                           histogram (every server assignment; waits measured in the pool)
//	pgpoolcheck_pool_server_assignments_total               counter
//	pgpoolcheck_pool_transactions_total                     counter
//	pgpoolcheck_pool_queries_total                          counter
//	pgpoolcheck_pool_received_bytes_total                   counter (from clients)
//	pgpoolcheck_pool_sent_bytes_total                       counter (to clients)
//	pgpoolcheck_pool_transaction_seconds_total              counter
//	pgpoolcheck_pool_query_seconds_total                    counter
//	pgpoolcheck_pool_client_parses_total                    counter (PgBouncer's client parse count)
//	pgpoolcheck_pool_server_parses_total                    counter
//	pgpoolcheck_pool_binds_total                            counter
//	pgpoolcheck_pool_prepared_evictions_total               counter
//	pgpoolcheck_hazards_total{rule,action}                  counter (session-state hazards)
//	pgpoolcheck_hazard_clients_total{rule,action}           counter (clients that caused them)
//	pgpoolcheck_servers_opened_total, pgpoolcheck_servers_lost_total   counter
//	pgpoolcheck_invalid_client_moves_total                  counter (moves refused by the client state machine: a pooler bug)
//	pgpoolcheck_loop_bridged_sockets_total                  counter (sockets an event loop bridged: its epoll set refused them)
//	pgpoolcheck_admin_clients                               gauge
//
// With a capture (Config.Capture), unlabelled:
//
//	pgpoolcheck_capture_events_total                        counter (events written to the capture)
//	pgpoolcheck_capture_dropped_events_total                counter (queue full, or not written after a write error)
//	pgpoolcheck_capture_failures_total                      counter (write errors that stopped the capture: a full disk)
//	pgpoolcheck_capture_resumes_total                       counter (restarts in a new part after one)
//	pgpoolcheck_capture_writing                             gauge (1 while the capture writes, 0 while stopped)
package metrics

import (
	"net/http"

	"github.com/pgpoolcheck/pgpoolcheck/pooler"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Collector is a prometheus.Collector over a proxy's Snapshot.
type Collector struct {
	proxy *pooler.Proxy

	clients, clientsPinned, servers, serversPinned *prometheus.Desc
	size, paused, maxWait, wait                    *prometheus.Desc
	assignments, xacts, queries, recv, sent        *prometheus.Desc
	xactTime, queryTime                            *prometheus.Desc
	clientParses, serverParses, binds, evictions   *prometheus.Desc
	hazards, hazardClients                         *prometheus.Desc
	opened, lost, admins, invalidMoves             *prometheus.Desc
	bridged                                        *prometheus.Desc
	capEvents, capDropped, capFailures, capResumes *prometheus.Desc
	capWriting                                     *prometheus.Desc
}

// NewCollector returns a collector of p's figures.
func NewCollector(p *pooler.Proxy) *Collector {
	pl := []string{"database", "user"}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("pgpoolcheck_"+name, help, labels, nil)
	}
	return &Collector{
		proxy:         p,
		clients:       d("pool_clients", "Clients of the pool by state: active (a server attached), waiting (for a server, or held by PAUSE), idle.", "database", "user", "state"),
		clientsPinned: d("pool_clients_pinned", "Clients pinned to their server by session state.", pl...),
		servers:       d("pool_servers", "Server connections of the pool by state: active (attached to a client), idle, login (being logged in), used (between a client and the pool: being handed on or cleaned).", "database", "user", "state"),
		serversPinned: d("pool_servers_pinned", "Server connections pinned to a client by session state.", pl...),
		size:          d("pool_size", "Maximum server connections of the pool.", pl...),
		paused:        d("pool_paused", "1 while the pool is paused by the admin console's PAUSE.", pl...),
		maxWait:       d("pool_max_wait_seconds", "How long the oldest client waiting for a server has waited.", pl...),
		wait:          d("pool_wait_seconds", "Time clients waited for a server, per server assignment.", pl...),
		assignments:   d("pool_server_assignments_total", "Server connections attached to clients.", pl...),
		xacts:         d("pool_transactions_total", "Transactions relayed.", pl...),
		queries:       d("pool_queries_total", "Queries relayed (simple Query and Execute messages).", pl...),
		recv:          d("pool_received_bytes_total", "Bytes received from clients and relayed.", pl...),
		sent:          d("pool_sent_bytes_total", "Bytes relayed to clients.", pl...),
		xactTime:      d("pool_transaction_seconds_total", "Time spent in transactions.", pl...),
		queryTime:     d("pool_query_seconds_total", "Time spent in queries (round trips to the server).", pl...),
		clientParses:  d("pool_client_parses_total", "Protocol Parse messages from clients.", pl...),
		serverParses:  d("pool_server_parses_total", "Parse messages sent to servers (after rewriting prepared statements).", pl...),
		binds:         d("pool_binds_total", "Bind messages of named prepared statements.", pl...),
		evictions:     d("pool_prepared_evictions_total", "Prepared statements evicted from the servers' caches.", pl...),
		hazards:       d("hazards_total", "Session-state hazards seen in transaction mode, by rule and the action the policy took.", "rule", "action"),
		hazardClients: d("hazard_clients_total", "Clients that caused a session-state hazard, by rule and action.", "rule", "action"),
		opened:        d("servers_opened_total", "Server connections opened."),
		lost:          d("servers_lost_total", "Server connections lost while attached to a client."),
		admins:        d("admin_clients", "Clients of the admin console."),
		invalidMoves:  d("invalid_client_moves_total", "Moves of a client between places that the client state machine refused: a pooler bug, also logged."),
		bridged:       d("loop_bridged_sockets_total", "Sockets an event loop bridged (moved by goroutines) because its epoll set refused them."),
		capEvents:     d("capture_events_total", "Events written to the capture."),
		capDropped:    d("capture_dropped_events_total", "Events the capture left out: its queue was full, or it could not write (after a write error, until it resumed)."),
		capFailures:   d("capture_failures_total", "Write errors (a full disk) that stopped the capture."),
		capResumes:    d("capture_resumes_total", "Times the capture went on in a new part after a write error."),
		capWriting:    d("capture_writing", "1 while the capture writes, 0 while it is stopped by a write error."),
	}
}

// Describe sends the metrics' descriptions.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.clients, c.clientsPinned, c.servers, c.serversPinned, c.size, c.paused,
		c.maxWait, c.wait, c.assignments, c.xacts, c.queries, c.recv, c.sent, c.xactTime, c.queryTime,
		c.clientParses, c.serverParses, c.binds, c.evictions, c.hazards, c.hazardClients, c.opened, c.lost, c.admins, c.invalidMoves, c.bridged,
		c.capEvents, c.capDropped, c.capFailures, c.capResumes, c.capWriting} {
		ch <- d
	}
}

// Collect takes one Snapshot and sends its metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.proxy.Snapshot()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for _, ps := range s.Pools {
		db, user := ps.Database, ps.User
		gauge(c.clients, float64(ps.ClientsActive), db, user, "active")
		gauge(c.clients, float64(ps.ClientsWaiting), db, user, "waiting")
		gauge(c.clients, float64(ps.ClientsIdle), db, user, "idle")
		gauge(c.clientsPinned, float64(ps.ClientsPinned), db, user)
		gauge(c.servers, float64(ps.ServersActive), db, user, "active")
		gauge(c.servers, float64(ps.ServersIdle), db, user, "idle")
		gauge(c.servers, float64(ps.ServersLogin), db, user, "login")
		gauge(c.servers, float64(ps.ServersUsed), db, user, "used")
		gauge(c.serversPinned, float64(ps.ServersPinned), db, user)
		gauge(c.size, float64(ps.Size), db, user)
		paused := 0.0
		if ps.Paused {
			paused = 1
		}
		gauge(c.paused, paused, db, user)
		gauge(c.maxWait, ps.MaxWait.Seconds(), db, user)
		t := ps.Totals
		ch <- waitHistogram(c.wait, t, db, user)
		counter(c.assignments, float64(t.ServerAssignments), db, user)
		counter(c.xacts, float64(t.Transactions), db, user)
		counter(c.queries, float64(t.Queries), db, user)
		counter(c.recv, float64(t.BytesReceived), db, user)
		counter(c.sent, float64(t.BytesSent), db, user)
		counter(c.xactTime, float64(t.XactTimeUs)/1e6, db, user)
		counter(c.queryTime, float64(t.QueryTimeUs)/1e6, db, user)
		counter(c.clientParses, float64(t.ClientParses), db, user)
		counter(c.serverParses, float64(t.ServerParses), db, user)
		counter(c.binds, float64(t.Binds), db, user)
		counter(c.evictions, float64(t.Evictions), db, user)
	}
	for _, h := range s.Hazards {
		counter(c.hazards, float64(h.Count), h.Rule, h.Action)
		counter(c.hazardClients, float64(h.Clients), h.Rule, h.Action)
	}
	counter(c.opened, float64(s.ServersOpened))
	counter(c.lost, float64(s.ServersLost))
	counter(c.invalidMoves, float64(s.InvalidMoves))
	counter(c.bridged, float64(s.Bridged))
	gauge(c.admins, float64(s.AdminClients))
	if cs := s.Capture; cs != nil {
		counter(c.capEvents, float64(cs.Events))
		counter(c.capDropped, float64(cs.Dropped))
		counter(c.capFailures, float64(cs.Failures))
		counter(c.capResumes, float64(cs.Resumes))
		writing := 0.0
		if cs.Writing {
			writing = 1
		}
		gauge(c.capWriting, writing)
	}
}

// waitHistogram is the pool's wait-time histogram: the pool observes only
// the acquisitions that had to wait (the fast path records nothing), so
// every other server assignment is a wait of zero, in every bucket.
func waitHistogram(d *prometheus.Desc, t pooler.PoolTotals, db, user string) prometheus.Metric {
	count := max(t.ServerAssignments, t.Waits)
	zero := count - t.Waits
	buckets := make(map[float64]uint64, len(pooler.WaitBuckets))
	cum := zero
	for i, bound := range pooler.WaitBuckets {
		if i < len(t.WaitCounts) {
			cum += t.WaitCounts[i]
		}
		buckets[bound] = uint64(cum)
	}
	return prometheus.MustNewConstHistogram(d, uint64(count), float64(t.WaitTimeUs)/1e6, buckets, db, user)
}

// Handler serves p's metrics, with the Go runtime's and the process's, in
// the Prometheus exposition format on /metrics.
func Handler(p *pooler.Proxy) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(p), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: nil}))
	return mux
}
