"""What the Python load scripts share: result checks and the counts they
print as their one line of JSON. Imported from the scripts' directory (a
script's own directory is first on sys.path)."""

import json
import threading


class Mismatch(Exception):
    pass


def expect(got, want, what):
    if got != want:
        raise Mismatch(f"{what}: got {got!r}, want {want!r}")


class Stats:
    """Counts of a run. fail is safe from many threads (the lock is
    harmless under asyncio)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.ok = 0
        self.errors = 0
        self.rows = 0
        self.first_error = None

    def fail(self, client, rnd, err):
        with self.lock:
            self.errors += 1
            if self.first_error is None:
                self.first_error = f"client {client} round {rnd}: {type(err).__name__}: {err}".strip()

    def summary(self):
        return json.dumps({"ok": self.ok, "errors": self.errors, "first_error": self.first_error, "rows": self.rows})
