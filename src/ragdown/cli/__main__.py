"""`python -m ragdown.cli`: the `ragdown` command."""

from ragdown.cli.main import main

if __name__ == "__main__":
    main()
