"""Security tests: each point of docs/security.md, through a real `horarium serve` where it can
be. No test sends a packet off 127.0.0.0/8."""
