// Package pgparams is what pgpoolcheck knows of the run-time parameters a
// client sets for its whole connection: the options startup parameter,
// read as the server reads it (Options, Settings), and the parameters
// that PgBouncer and pgpoolcheck's pooler keep per client (Tracked,
// Canonical, IsTracked). The pooler and its engine, the rules and the
// scan of connection strings use it; it imports nothing of pgpoolcheck's
// and no parser, so that the pooler links no libpg_query through it.
package pgparams
