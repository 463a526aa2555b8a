"""`python -m horarium.cli`: the `horarium` command."""

from horarium.cli import main

main()
