"""The database, in three parts: `resources` (the management API's SQL), `runs` (the engine's),
`core` (what both stand on: the engines and tables, migrations, secrets at rest, execution
tags, wake-ups, outages)."""
