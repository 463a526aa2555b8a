"""Dashboard tests: its extension endpoints (on SQLite and PostgreSQL), its files, and the pages
in a real Chromium against a real `horarium serve`."""
