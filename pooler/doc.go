// Package pooler is pgpoolcheck's PostgreSQL proxy and connection pooler.
//
// Clients speak protocol 3.0 to the Proxy, which authenticates them itself
// (trust, md5, SCRAM-SHA-256 or a client certificate, against a
// PgBouncer-format userlist or secrets looked up on the server) and then
// relays their messages to server connections taken from a pool per
// (database, user). In transaction mode a server is attached when a
// client's transaction starts and goes back to the pool at ReadyForQuery
// 'I' once nothing is outstanding (the engine's step at that message,
// engine.Client.Server); in session and record mode a client keeps one
// server for its whole session. Every
// server that leaves a client goes through one function, pool.putBack.
//
// Event loops relay every logged-in client, in every mode, with or
// without TLS on either side (evloop*.go): on Linux each watches its
// sockets with an edge-triggered epoll set; a socket it cannot watch
// itself (no descriptor of its own, refused by the epoll set, or any
// socket where there is no epoll) is bridged: two goroutines move its
// bytes and tell the loop of them as epoll would (bridge.go). In
// transaction mode a loop logs servers in and waits out a paused database
// aside, and sets up, verifies (stateRead) and cleans servers with
// queries whose answers it reads itself; in session and record mode a
// client's server is set up on its login goroutine before a loop adopts
// the client with it. A loop streams messages larger than its buffers and
// feeds each message to the client's engine (package engine), which
// answers with a step: forward, refuse, send in place, release, verify,
// clean, close (framing, the relay state, the policy from login, the
// prepared-statement tracking and every release, verify, clean and vanish
// decision are the engine's). The driver carries the steps out: the
// per-message code of step.go, the setup and clean plans (setupSQL,
// cleanPlan) and
// the reading of the pooler's own queries' answers
// (serverConn.internalAnswer). A client has one owner at a time (its
// login goroutine, then its loop; a loop's own record, evLoop.own, says
// which clients are its) and no lock: the janitor's timeouts, cancel
// requests, the statistics and KILL are posted to its loop (msgTimeouts,
// msgCancel, msgReport, msgKill): whoever must end it sets its FATAL, and
// its owner shuts its socket's read side. Clients of the admin console stay
// on their login goroutine. A socket (rawIO) has no lock either: only its
// owner uses it. docs/design-event-loop.md describes the loops, where a client
// can be, the bridges and the locks that remain.
//
// Files:
//   - proxy.go: listener, shutdown, the janitor; config.go: Config;
//     settings.go: the settings table (every setting's name, type,
//     default, check, whether RELOAD or SET may change it, and its Config
//     field), which drives the command line's flags, the config files,
//     SHOW CONFIG, SET and RELOAD;
//     running.go: the running configuration, one snapshot (Proxy.live)
//     that RELOAD and SET replace as a whole.
//   - client.go: a client's life from login to its loop (serveClient,
//     attachAtLogin, toLoop); login.go: its login (the startup packet,
//     the allow-list of databases, authentication, the parameters it
//     carries); startup.go and wire.go: startup packets and message
//     encoding.
//   - auth.go, scram.go, userlist.go: client authentication;
//     authquery.go: auth_user/auth_query lookups; passthrough.go: server
//     logins with the md5 hash or SCRAM verifier the pooler holds.
//   - step.go: what is done per message, each an event fed to the
//     client's engine and its step carried out: admit (the body the
//     engine reads, the capture, the policy's verdict), forward, setUp,
//     serverMessage and settle, serverLost, vanish.
//   - evloop.go: the event loops and their inbox; evloop_client.go and
//     evloop_server.go: a loop's client and server sides (large messages
//     streamed or gathered); evloop_query.go: the pooler's own queries on
//     a loop (runQueries); evloop_verify.go: the read of a server's state
//     on a loop; evloop_handoff.go: adopt, take, forget; evloop_table.go:
//     the loops' tables of descriptors and bridges' tokens; evloop_sys.go
//     (Linux): the epoll set and its raw system calls; evloop_nosys.go
//     (elsewhere): a loop that waits on a channel, every socket bridged.
//   - rawio.go: sockets taken out of the runtime's poller; bridge.go:
//     sockets a loop cannot watch itself, moved by a reader and a writer
//     goroutine.
//   - track.go: the driver of the engine's prepared-statement tracking
//     (writing the planned messages, relaying or swallowing the answers).
//   - state.go: session state in transaction mode (classification, the
//     preserve/reset/reject/allow policies, pinning, cleaning a server,
//     reading a server's state after a DO block or a routine call);
//     routines.go: what the pooler learns of the routines clients call.
//   - pool.go: pools, their admission (admit, shared by the loops and
//     acquire), their wait queue and the one release site (putBack);
//     server.go: server connections; cancel.go: cancel keys and
//     forwarding.
//   - proxy.go also holds the janitor's sweeps: idle servers, forgotten
//     pools, the client timeouts (enforceClientTimeouts), logins in
//     progress (startLogin, bounded by MaxLoginClients).
//   - stats.go: counters and Proxy.Snapshot; admin.go: the admin console
//     (login, commands; database pgpoolcheck or pgbouncer), admin_show.go
//     its SHOW result sets, admin_pause.go PAUSE/RESUME, DISABLE,
//     RECONNECT and WAIT_CLOSE, adminops.go its SET command, KILL, stats
//     users and SHOW MEM/SOCKETS/FDS; metricsserver.go: the HTTP server of
//     package pooler/metrics.
//   - caps.go: max_db_connections and max_user_connections, server
//     connections counted per database and per user across pools.
//   - capturetoggle.go: a build tag for measuring the capture's cost.
package pooler
