"""`python -m memvault`: the same command as the `memvault` script."""

from .cli import main

main()
