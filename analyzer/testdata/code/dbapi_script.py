# A script: its module code runs on one DB-API connection, which begins a
# transaction at the first statement and keeps it until commit(). The
# INSERT and the currval() after it share that transaction.
import sys

import pgdb

conn = pgdb.connect(sys.argv[1])
cur = conn.cursor()
for line in open(sys.argv[2]):
    shelf, title = line.rstrip("\n").split(";")
    cur.execute("INSERT INTO books (title) VALUES (%s)", (title,))
    cur.execute("SELECT currval('books_id_seq')")
    book = cur.fetchone()[0]
    cur.execute("INSERT INTO shelf_books (shelf, book_id) VALUES (%s, %s)", (shelf, book))
    conn.commit()

# After the commit a new transaction begins: nothing advanced the
# sequence in it.
cur.execute("SELECT lastval()")  # want sequence-session
print(cur.fetchone()[0])
conn.commit()


def report(c):
    c.execute("SELECT count(*) FROM books")


cur.execute("INSERT INTO imports (finished_at) VALUES (now())")
report(cur)
# A function between: the module's transaction goes on.
cur.execute("SELECT currval('imports_id_seq')")
conn.commit()
