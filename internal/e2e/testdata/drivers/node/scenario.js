// One node-postgres scenario: node scenario.js URL SCENARIO.
//
// node-postgres sends a query without values as a simple Query, and one
// with values as Parse, Bind, Describe, Execute and Sync in one write (the
// unnamed statement, or a named one when the query has a name: Parse only
// the first time on a connection, then Bind to Sync).
'use strict'
const { Client } = require('pg')

function check (got, want, what) {
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    throw new Error(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`)
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function main (url, scenario) {
  const c = new Client({ connectionString: url, application_name: 'e2e-node' })
  await c.connect()
  const one = async (q, values) => Object.values((await c.query(q, values)).rows[0])[0]
  switch (scenario) {
    case 'named':
      for (let i = 0; i < 3; i++) {
        check(await one({ name: 'e2e_q1', text: 'SELECT $1::int + 1', values: [i] }), i + 1, 'named query')
      }
      break
    case 'params':
      for (let i = 0; i < 3; i++) {
        check(await one('SELECT $1::int + 1', [i]), i + 1, 'query with values')
      }
      break
    case 'set':
      await c.query('SET statement_timeout = 5000')
      check(await one('SHOW statement_timeout'), '5s', 'statement_timeout')
      break
    case 'set-local':
      await c.query('BEGIN')
      await c.query('SET LOCAL statement_timeout = 5000')
      check(await one('SHOW statement_timeout'), '5s', 'inside')
      await c.query('COMMIT')
      check(await one('SHOW statement_timeout'), '0', 'after commit')
      break
    case 'temp-table':
      await c.query('CREATE TEMP TABLE e2e_scratch (id int)')
      await c.query('INSERT INTO e2e_scratch VALUES ($1)', [1])
      check(await one('SELECT count(*)::int FROM e2e_scratch'), 1, 'rows')
      break
    case 'idle':
      await c.query('BEGIN')
      await c.query('SELECT id FROM e2e_jobs FOR UPDATE')
      await sleep(1500)
      await c.query('COMMIT')
      break
    default:
      throw new Error(`unknown scenario ${scenario}`)
  }
  await c.end()
}

main(process.argv[2], process.argv[3]).catch((err) => {
  console.error(err)
  process.exit(1)
})
