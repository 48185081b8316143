"""`python -m jupyter_deepagent.cli`: the same as the `jupyter-deepagent` command."""

import sys

from jupyter_deepagent.cli import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
