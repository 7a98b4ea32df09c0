"""``python -m dynavec_langgraph._cli``: the command line, as the ``dynavec-langgraph`` script
runs it."""

import sys

from dynavec_langgraph._cli import main

if __name__ == "__main__":
    sys.exit(main())
