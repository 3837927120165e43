package rules

import "github.com/pgpoolcheck/pgpoolcheck/rules/effects"

// Listen flags LISTEN.
var Listen = &Rule{
	ID:       "listen",
	Title:    "LISTEN registers the server connection, not the client",
	Severity: Error,
	Fix:      "listen on a dedicated connection that bypasses the pooler (or a session-mode pool); NOTIFY and pg_notify() are safe through it",
	Check:    checkListen,
	Crossed:  crossedListen,
	APIs:     listenAPIs,
}

// listenAPIs are the driver APIs that LISTEN, or wait for the
// notifications of a LISTEN, on the server connection.
var listenAPIs = []DriverAPI{
	sqlxListener("connect"),
	sqlxListener("connect_with"),
	sqlxListen("listen"),
	sqlxListen("listen_all"),
	{
		API: "NpgsqlConnection.Notification", Library: "Npgsql, C#", Severity: Error, State: effects.Listen,
		Text:    "{recv}.Notification += …",
		Subject: "{recv}.Notification",
		Does:    "receives the notifications of the server connection that ran LISTEN, not of the client",
		Breaks:  "between transactions that connection serves other clients, so this handler misses the notifications and the next client of the connection receives them",
	},
	npgsqlWait("Wait"),
	npgsqlWait("WaitAsync"),
	{
		API: "Sequel.listen", Library: "Sequel, Ruby", When: "with a block or loop:", Severity: Error, State: effects.Listen,
		Text:    "{recv}.listen(…)",
		Subject: "{recv}.listen(…) (Sequel)",
		Does:    "runs LISTEN on a connection of its pool and waits there for notifications",
		Breaks:  "behind a transaction pooler that server connection serves other clients between transactions, so the notifications go to its next client and this block misses them",
	},
}

// sqlxListenerBreaks is what breaks for a PgListener.
const sqlxListenerBreaks = "between transactions that connection serves other clients, so recv() misses the notifications and the connection's next client receives them"

// sqlxListener is a constructor of sqlx's PgListener, reported when the
// file calls no listen method on it.
func sqlxListener(ctor string) DriverAPI {
	text := "PgListener::" + ctor + "(…)"
	return DriverAPI{API: "PgListener." + ctor, Library: "sqlx, Rust", When: "when the file calls no listen method", Severity: Error, State: effects.Listen,
		Text: text, Does: "makes an sqlx PgListener, which sends LISTEN on its connection and waits there for notifications", Breaks: sqlxListenerBreaks}
}

// sqlxListen is a method of sqlx's PgListener that sends LISTEN.
func sqlxListen(method string) DriverAPI {
	text := "{recv}." + method + "(…)"
	return DriverAPI{API: "PgListener." + method, Library: "sqlx, Rust", Severity: Error, State: effects.Listen,
		Text: text, Does: "subscribes the server connection to the channel, not the client (sqlx's PgListener sends LISTEN)", Breaks: sqlxListenerBreaks}
}

// npgsqlWait is a method of NpgsqlConnection that waits for notifications.
func npgsqlWait(method string) DriverAPI {
	return DriverAPI{API: "NpgsqlConnection." + method, Library: "Npgsql, C#", Severity: Error, State: effects.Listen,
		Text:    "{recv}." + method + "(…)",
		Subject: "{recv}." + method + "()",
		Does:    "waits for notifications on the server connection that ran LISTEN",
		Breaks:  "outside a transaction this client holds no server connection, so the notifications go to the connection's next client and this wait does not see them"}
}

func checkListen(p *Pass) {
	h, note := p.Target.Handle(effects.Listen)
	pairs := p.Group.pairing()
	for i, st := range p.Group.Stmts {
		if st.Node == nil || p.Group.Undone(i) || p.Group.EndsInPrepare() {
			// LISTEN takes effect at COMMIT; an aborted one never does, and
			// PREPARE TRANSACTION refuses a transaction that ran LISTEN or
			// UNLISTEN (it rolls back).
			continue
		}
		for j, e := range st.Changes() {
			step := pairs.stepOf(i, j)
			switch e.Kind {
			case effects.Listen:
				if _, ok := pairs.endedAfter(step.Held, i); ok {
					continue // an UNLISTEN later in the transaction cancels it
				}
				p.Report(st, -1, Adjust(Error, h), StateMessage("LISTEN "+e.Name+" subscribes the server connection, not the client",
					"notifications arrive on it after this transaction, so this client misses them and the next client of the connection receives them", h, note), "")
			case effects.Unlisten, effects.UnlistenAll:
				if len(step.Ended) > 0 {
					continue // cancels a LISTEN of the same transaction
				}
				ch := e.Name
				if ch == "" {
					ch = "*"
				}
				p.Report(st, -1, Info, StateMessage("UNLISTEN "+ch+" acts on whichever server connection this transaction gets, not necessarily the one that ran LISTEN",
					"that connection stays subscribed", h, note), "")
			}
		}
	}
}
