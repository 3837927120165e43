// Package pooler is pgpoolcheck's PostgreSQL proxy and connection pooler.
//
// Clients speak protocol 3.0 to the Proxy, which authenticates them itself
// (trust, md5 or SCRAM-SHA-256 against a PgBouncer-format userlist) and then
// relays their messages to server connections taken from a pool per
// (database, user). In transaction mode a server is attached when a
// client's transaction starts and goes back to the pool at ReadyForQuery
// 'I' once nothing is outstanding (see mayRelease); in session and record
// mode a client keeps one server for its whole session.
//
// The relay forwards raw bytes and decodes only the messages whose content
// the pooler needs. Its per-client state machine is described on the
// clientConn type. Files: client.go (login), auth.go, scram.go and
// userlist.go (client authentication), relay.go (both directions of the
// relay and clean-up of vanished clients), release.go (the pure release and
// clean-up decisions), pool.go (pools and the wait queue), server.go
// (server connections), cancel.go (cancel keys and forwarding), proxy.go
// (listener, shutdown, janitor), startup.go and wire.go (framing),
// stats.go (counters and Proxy.Snapshot), admin.go (the admin console on
// the virtual database pgpoolcheck, PAUSE/RESUME, RELOAD) and
// metricsserver.go (the HTTP server for package pooler/metrics).
//
// Where later features fit: prepared-statement rewriting sees Parse, Bind,
// Describe and Close in the client loop of relay (before countFrontend)
// and prepares statements on a newly attached server in attach, next to
// applyParams; the capture hook observes the same client loop and the
// pump's server messages; session-state policies pin a server through
// relState.Pinned and clean it in vanish and before release.
package pooler
