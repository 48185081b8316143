"""The kernel session: one object owns a cell's run (rewind, settle, run, record), threads and approvals."""
