"""The query path: open the snapshot, run SPARQL (embedded or remote), export.

Standard library and pyoxigraph only; imports no other kbq package but kbq.errors and kbq.version."""
