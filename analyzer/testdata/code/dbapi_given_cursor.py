# DB-API 2.0 connections do not autocommit: a statement begins a
# transaction that lasts until commit() or rollback(). A function that is
# given its cursor or connection runs in its caller's transaction, which
# holds the caller's INSERT, so the sequence's value is the caller's.
# This file imports no driver: the cursors come from elsewhere.


def record_sample(cu, patient):
    cu.execute("INSERT INTO samples (patient_id) VALUES (%s)", (patient,))
    cu.execute("SELECT currval('samples_id_seq')")
    return cu.fetchone()[0]


def last_sample_id(cursor, table):
    # Called right after its caller's INSERT, before any commit.
    cursor.execute("SELECT currval(%s)", (table + "_id_seq",))
    return cursor.fetchone()[0]


def add_visit(db, patient):
    cur = db.cursor()
    cur.execute("INSERT INTO visits (patient_id) VALUES (%s)", (patient,))
    cur.execute("SELECT lastval()")
    return cur.fetchone()[0]


class VisitStore:
    def last_id(self):
        self.execute("SELECT lastval()")
        return self.cursor.fetchone()[0]


def add_then_read(db, patient):
    cur = db.cursor()
    cur.execute("INSERT INTO visits (patient_id) VALUES (%s)", (patient,))
    db.commit()
    # A new transaction: maybe another server connection.
    cur.execute("SELECT lastval()")  # want sequence-session
    return cur.fetchone()[0]


def import_visit(cu, patient):
    cu.execute("DELETE FROM staging_visits")
    cu.connection.commit()
    # A new transaction begins at the INSERT and holds the read.
    cu.execute("INSERT INTO visits (patient_id) VALUES (%s)", (patient,))
    cu.execute("SELECT currval('visits_id_seq')")
    return cu.fetchone()[0]


def add_commit_read(cu, patient):
    cu.execute("INSERT INTO visits (patient_id) VALUES (%s)", (patient,))
    cu.execute("COMMIT")
    cu.execute("SELECT lastval()")  # want sequence-session
    return cu.fetchone()[0]


def read_alone():
    # No cursor given: nothing says which transaction this is.
    cur = pool().cursor()
    cur.execute("SELECT lastval()")  # want sequence-session
    return cur.fetchone()[0]


def add_visit_note(cu, visit, note):
    cu.execute("INSERT INTO notes (visit_id, body) VALUES (%s, %s)", (visit, note))
# a comment at the margin does not end the function
    cu.execute("""
SELECT currval('notes_id_seq')
""")
    return cu.fetchone()[0]
