"""What the API's side and the engine's side of the store both stand on: opening the database
(`db`, `open_errors`, `outages`), the tables (`schema`, `types`) and their migrations, secrets at
rest (`sealing`, `secret_keys`, `resealing`, `seal_marks`), execution tags (`tags`), waking the
engines (`wakeups`), and the health checks' questions (`probes`)."""
