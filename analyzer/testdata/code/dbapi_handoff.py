# DB-API connections keep one transaction until commit(): a helper that
# is handed the connection runs its INSERT in the caller's transaction, so
# a currval() after the call reads that transaction's nextval().
import psycopg2

from archive import shelves


def add_box(conn, label):
    conn.commit()
    shelves.insert_box(conn, label)
    cur = conn.cursor()
    cur.execute("SELECT currval('boxes_id_seq')")
    box = cur.fetchone()[0]
    conn.commit()
    return box


def add_box_by_keyword(db, label):
    cur = db.cursor()
    cur.execute("DELETE FROM draft_boxes")
    db.commit()
    shelves.insert_box(label=label, connection=db)
    cur.execute("SELECT lastval()")
    return cur.fetchone()[0]


def read_after_commit(conn, label):
    shelves.insert_box(conn, label)
    conn.commit()
    # The helper's INSERT was committed: a new transaction begins here.
    cur = conn.cursor()
    cur.execute("SELECT currval('boxes_id_seq')")  # want sequence-session
    return cur.fetchone()[0]


def label_only(label):
    conn = psycopg2.connect("dbname=archive")
    cur = conn.cursor()
    # Only the label is handed over: the connection is this function's own.
    shelves.insert_label(label)
    print(conn)
    cur.execute("SELECT lastval()")  # want sequence-session
    return cur.fetchone()[0]
