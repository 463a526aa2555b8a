"""Running Horarium as a process: `serve` (the API, and the engine unless `--no-engine`) and
`worker` (the engine alone); the ports bound before anything else (`ports`), the database and
the secret key opened (`opening`), the `--metrics-port` listener (`probe_server`)."""
