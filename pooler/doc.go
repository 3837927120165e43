// Package pooler is pgpoolcheck's PostgreSQL proxy and connection pooler.
//
// Clients speak protocol 3.0 to the Proxy, which authenticates them itself
// (trust, md5, SCRAM-SHA-256 or a client certificate, against a
// PgBouncer-format userlist or secrets looked up on the server) and then
// relays their messages to server connections taken from a pool per
// (database, user). In transaction mode a server is attached when a
// client's transaction starts and goes back to the pool at ReadyForQuery
// 'I' once nothing is outstanding (engine.MayRelease); in session and
// record mode a client keeps one server for its whole session.
//
// Two drivers relay a logged-in client: the event loops (evloop.go, the
// default in transaction mode) and the goroutine relay (relay.go). Both ask
// the same code what each message means: package engine for framing and
// the release decisions, and the functions of this package named below.
// docs/design-event-loop.md describes the drivers, where a client can be,
// and the hand-offs between them.
//
// Files:
//   - proxy.go: listener, shutdown, the janitor (idle servers, parking
//     quiet clients); config.go: Config; settings.go: the settings table
//     (every setting's name, type, default, check, whether RELOAD or SET
//     may change it, and its Config field), which drives the command
//     line's flags, the config files, SHOW CONFIG, SET and RELOAD;
//     running.go: the running configuration, one snapshot (Proxy.live)
//     that RELOAD and SET replace as a whole.
//   - client.go: a client's login (TLS negotiation, the allow-list of
//     databases) and its life between the drivers (run, toLoop, parking);
//     startup.go and wire.go: startup packets and message encoding.
//   - auth.go, scram.go, userlist.go: client authentication;
//     authquery.go: auth_user/auth_query lookups; passthrough.go: server
//     logins with the md5 hash or SCRAM verifier the pooler holds.
//   - relay.go: the goroutine relay (relay, pump) and what both drivers
//     share: admit (the body the engine must see, the capture, the
//     policy's verdict), forward, attach/setUp, serverMessage,
//     readyForQuery, serverLost, vanish.
//   - evloop.go (Linux): the event loops; evloop_other.go elsewhere;
//     rawio.go: sockets taken out of the runtime's poller; idlepoll.go:
//     the poller of parked clients.
//   - track.go: the driver of the engine's prepared-statement tracking
//     (writing the planned messages, relaying or swallowing the answers).
//   - state.go: session state in transaction mode (classification, the
//     preserve/reset/reject/allow policies, pinning, cleaning a server,
//     reading a server's state after a DO block or a routine call);
//     routines.go: what the pooler learns of the routines clients call.
//   - pool.go: pools and their wait queue; server.go: server connections;
//     cancel.go: cancel keys and forwarding.
//   - proxy.go also holds the janitor's sweeps: idle servers, forgotten
//     pools, the client timeouts (enforceClientTimeouts), logins in
//     progress (startLogin, bounded by MaxLoginClients).
//   - stats.go: counters and Proxy.Snapshot; admin.go: the admin console
//     (SHOW, PAUSE/RESUME, RELOAD, SHUTDOWN; database pgpoolcheck or
//     pgbouncer), adminops.go its SET command, KILL, stats users and SHOW
//     MEM/SOCKETS/FDS; metricsserver.go: the HTTP server of package
//     pooler/metrics.
//   - caps.go: max_db_connections and max_user_connections, server
//     connections counted per database and per user across pools.
//   - capturetoggle.go: a build tag for measuring the capture's cost.
package pooler
