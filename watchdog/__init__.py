"""watchdog: a data-quality watchdog for SQL databases.

Not to be confused with the PyPI package of the same import name (a file-system
events library): this package is the one in this repository.
"""

__version__ = "0.1.0"
