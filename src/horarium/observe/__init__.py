"""Observability: the process's Prometheus metrics (`metrics`), the readiness checks (`health`)
and the `/metrics` exposition (`exposition`). Design and the list of metrics:
docs/operations.md."""
