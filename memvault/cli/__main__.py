"""`python -m memvault.cli`: the same command as the `memvault` script."""

from memvault.cli import main

main()
