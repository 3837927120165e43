# psycopg begins a transaction at a connection's first statement and keeps
# it until commit() or rollback(): an INSERT and the currval() after it,
# with no commit between, share one transaction.
import psycopg2


def add_invoice(conn, customer):
    cur = conn.cursor()
    cur.execute("INSERT INTO invoices (customer_id) VALUES (%s)", (customer,))
    cur.execute("SELECT currval('invoices_id_seq')")
    invoice = cur.fetchone()[0]
    conn.commit()
    return invoice


def add_then_read(conn, customer):
    cur = conn.cursor()
    cur.execute("INSERT INTO invoices (customer_id) VALUES (%s)", (customer,))
    conn.commit()
    # A new transaction: maybe another server connection.
    cur.execute("SELECT lastval()")  # want sequence-session
    return cur.fetchone()[0]


def last_invoice(cur):
    # No INSERT before it in this function, but the cursor is the
    # caller's: the read runs in the caller's transaction, after the
    # caller's INSERT (psycopg keeps both in one until commit()).
    cur.execute("SELECT lastval()")
    return cur.fetchone()[0]


def fresh_invoice_id(dsn):
    # Its own connection: nothing ran before in its transaction.
    conn = psycopg2.connect(dsn)
    cur = conn.cursor()
    cur.execute("SELECT lastval()")  # want sequence-session
    return cur.fetchone()[0]
