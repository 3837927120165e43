// Load through a PostgreSQL pooler with node-postgres (pg), checking every
// result.
//
// Usage: node load.js URL VARIANT CLIENTS ROUNDS
//
// Variants:
//   plain  one pg.Client per client; parameterised queries (the unnamed
//          statement: Parse/Bind/Describe/Execute/Sync each time)
//   named  the same with named prepared statements ({name, text, values}):
//          pg Parses each name once per connection and only Binds it after
//   pool   a pg.Pool of CLIENTS connections; single queries go through
//          pool.query, transactions through pool.connect()
//
// CLIENTS concurrent clients each run ROUNDS rounds (see ../../drivers_test.go)
// and one line of JSON is printed: ok, errors, first_error and rows.
'use strict';

const pg = require('pg');

const A = 'SELECT $1::int + 1 AS v';
const B = "SELECT $1::text || '-' || $2::int AS v";
const DIV = 'SELECT 1 / $1::int AS v';
const TXID = 'SELECT txid_current() AS txid, pg_backend_pid() AS pid';
const INSERT = 'INSERT INTO driver_rows (variant, client, round) VALUES ($1, $2, $3)';

class Mismatch extends Error {}

function expect(got, want, what) {
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    throw new Mismatch(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
}

async function expectError(promise, code, what) {
  try {
    await promise;
  } catch (e) {
    expect(e.code, code, what);
    return;
  }
  throw new Mismatch(`${what}: no error`);
}

function main() {
  const [url, variant, clientsArg, roundsArg] = process.argv.slice(2);
  const clients = Number(clientsArg);
  const rounds = Number(roundsArg);
  if (!['plain', 'named', 'pool'].includes(variant)) {
    console.error(`unknown variant ${variant}`);
    process.exit(2);
  }
  const named = variant === 'named';
  const stats = { ok: 0, errors: 0, first_error: null, rows: 0 };

  // q builds a query config, named in the named variant.
  const q = (name, text, values) => (named ? { name, text, values } : { text, values });

  async function round(db, acquire, c, r) {
    const v = c * 100000 + r;
    let rows = 0;
    let res = await db.query(q('a', A, [v]));
    expect(res.rows[0].v, v + 1, 'SELECT $1::int + 1');
    res = await db.query(q('b', B, [String(c), r]));
    expect(res.rows[0].v, `${c}-${r}`, 'concatenation');

    if (r % 10 === 9) {
      const tx = await acquire();
      try {
        await tx.query('BEGIN');
        const first = (await tx.query(q('txid', TXID, []))).rows[0];
        await tx.query(q('insert', INSERT, [`node-postgres/${variant}`, c, r]));
        const second = (await tx.query(q('txid', TXID, []))).rows[0];
        expect(second, first, 'txid and backend within a transaction');
        await tx.query('COMMIT');
        rows++;
      } finally {
        tx.release();
      }
    }

    if (r % 25 === 24) {
      // An error outside a transaction, then more queries.
      const conn = await acquire();
      try {
        await expectError(conn.query(q('div', DIV, [0])), '22012', 'division by zero');
        res = await conn.query(q('a', A, [v]));
        expect(res.rows[0].v, v + 1, 'query after an error');
      } finally {
        conn.release();
      }
    }

    if (r % 50 === 49) {
      // An error inside a transaction, rolled back.
      const tx = await acquire();
      try {
        await tx.query('BEGIN');
        res = await tx.query(q('int', 'SELECT $1::int AS v', [v]));
        expect(res.rows[0].v, v, 'in a transaction');
        await expectError(tx.query(q('div', DIV, [0])), '22012', 'division by zero');
        await expectError(tx.query(q('one', 'SELECT 1 AS v', [])), '25P02', 'a query in an aborted transaction');
        await tx.query('ROLLBACK');
        // The first statement of a transaction: its own, not the rolled back one.
        res = await tx.query('SELECT transaction_timestamp() = statement_timestamp() AS idle');
        expect(res.rows[0].idle, true, 'no transaction after the rollback');
      } finally {
        tx.release();
      }
    }
    return rows;
  }

  async function run() {
    let pool = null;
    const conns = [];
    if (variant === 'pool') {
      pool = new pg.Pool({ connectionString: url, max: clients });
      // Open every connection before any client starts.
      const held = await Promise.all(Array.from({ length: clients }, () => pool.connect()));
      held.forEach((h) => h.release());
    } else {
      for (let i = 0; i < clients; i++) conns.push(new pg.Client({ connectionString: url }));
      await Promise.all(conns.map((c) => c.connect()));
    }
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        const db = pool || conns[c];
        // acquire gives a connection for a transaction and its release.
        const acquire = pool ? () => pool.connect() : async () => ({ query: (x, y) => conns[c].query(x, y), release() {} });
        let rows = 0;
        for (let r = 0; r < rounds; r++) {
          try {
            rows += await round(db, acquire, c, r);
            stats.ok++;
          } catch (e) {
            stats.errors++;
            if (stats.first_error === null) stats.first_error = `client ${c} round ${r}: ${e.name}: ${e.message}${e.code ? ` (${e.code})` : ''}`;
            if (!pool) {
              try {
                await conns[c].query('ROLLBACK');
              } catch (e2) {
                break;
              }
            }
          }
        }
        stats.rows += rows;
      }),
    );
    if (pool) await pool.end();
    await Promise.all(conns.map((c) => c.end()));
    console.log(JSON.stringify(stats));
  }

  run().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

main();
