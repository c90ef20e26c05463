"""`python -m memvault.cli`: the same command as the `memvault` script."""

from . import main

main()
