"""Backups of a Horarium store and their restore (`horarium backup`, `horarium restore`).

A backup is a folder: `manifest.json` (`manifest`), the database — a SQLite copy made while the
service runs (`sqlite_copy`), or the `pg_dump` archive the operator makes with the command
`horarium backup` prints (`postgres`) — and, only when asked for, the secret key, in clear or
sealed under a passphrase (`key_copy`). `making` and `restoring` are the two procedures;
`horarium.cli.backups` their command line. docs/operations.md, "Backup and restore".
"""
