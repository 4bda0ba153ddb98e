"""Table monitors: volume, freshness and schema changes of every table of some schemas, from the catalogue.

``monitor:`` on an audit (:class:`~watchdog.monitor.config.MonitorConfig`) watches every table of the
schemas it names without a suite. Each run reads the database's own statistics -- a constant number of
statements per schema, no table scan (:mod:`watchdog.monitor.catalogue`) -- and turns each table into
findings ``<table>.volume``, ``<table>.freshness`` and ``<table>.schema_changes`` judged against the audit's
earlier runs (:mod:`watchdog.monitor.judge`). :func:`watchdog.monitor.run.monitor_findings` is the entry point.
"""

