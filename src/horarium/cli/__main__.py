"""`python -m horarium.cli`: the `horarium` command."""

from horarium.cli import main

if __name__ == "__main__":  # not when a process pool's worker imports this module again
    main()
