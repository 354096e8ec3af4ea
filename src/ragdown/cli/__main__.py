"""`python -m ragdown.cli`: the `ragdown` command."""

import sys

from ragdown.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
