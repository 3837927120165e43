# A helper given a list of statements runs them together, in one
# transaction: a currval() in the list reads the nextval() of an INSERT
# before it in the same list.
from clinic import store


def add_patient(name, born):
    return store.run_all(
        [
            {"sql": "INSERT INTO patients (name, born) VALUES (%(n)s, %(b)s)", "args": {"n": name, "b": born}},
            {"sql": "SELECT currval('patients_id_seq')"},
        ]
    )


def add_visit(patient, urgent):
    steps = []
    if urgent:
        sql = "INSERT INTO visits (patient_id, urgent) VALUES (%s, true)"
    else:
        sql = "INSERT INTO visits (patient_id) VALUES (%s)"
    steps.append((sql, [patient]))
    sql = "SELECT currval('visits_id_seq')"
    steps.append((sql, []))
    rows = store.run_all(steps, return_rows=True)
    return rows[-1][0]


def add_note(visit, text):
    insert = "INSERT INTO notes (visit_id, body) VALUES (%s, %s)"
    read = "SELECT lastval()"
    return store.run_all(queries=[(insert, [visit, text]), (read, [])])


def add_note_then_read(visit, text):
    # Two calls: two transactions, maybe on two server connections.
    store.run_all([("INSERT INTO notes (visit_id, body) VALUES (%s, %s)", [visit, text])])
    return store.run_one("SELECT lastval()")  # want sequence-session


def read_first(visit):
    # The read runs before the list's INSERT: nothing advanced the
    # sequence yet in this transaction.
    return store.run_all(["SELECT currval('notes_id_seq')", "INSERT INTO notes (visit_id) VALUES (1)"])  # want sequence-session


def logged_then_run_alone(visit):
    # Printed, not run as a list: each step is a transaction of its own.
    steps = ["INSERT INTO notes (visit_id) VALUES (%s)" % visit, "SELECT currval('notes_id_seq')"]  # want sequence-session
    print(steps)
    for step in steps:
        store.run_one(step)
    return len(steps)
