"""``python -m watchdog.testing.openai_stub`` (see :mod:`watchdog.testing.openai_stub.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
