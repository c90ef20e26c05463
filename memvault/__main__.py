"""The `memvault` program: the script and `python -m memvault`. A Ctrl-C is handled from the
first moment (interrupt.py), before the CLI's imports."""

from memvault.interrupt import note_early


def run() -> None:
    """Note an early Ctrl-C, then import and run the CLI."""
    note_early()
    from memvault.cli import main

    main()


if __name__ == "__main__":
    run()
