"""`python -m xcsh` entry point."""

from xcsh.cli.entry import main

if __name__ == "__main__":
    raise SystemExit(main())
