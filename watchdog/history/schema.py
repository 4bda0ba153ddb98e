"""The history database's tables (created on first use by :class:`watchdog.history.HistoryStore`).

Runs, their findings and deliveries; and what several ``serve`` instances share: the leader's
lease (``wd_leases``), who is serving (``wd_members``), how each one stopped (``wd_stops``) and each
audit tick's claim (``wd_ticks``); and what each alert destination was last told (``wd_alerts``,
``remind_after``).
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

runs = sa.Table(
    "wd_runs", metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("audit", sa.String(200), nullable=False, index=True),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("started_at", sa.String(40), nullable=False),
    sa.Column("finished_at", sa.String(40)),
    sa.Column("summary", sa.Text),           # JSON {checks, passed, warned, failed, errors}
    sa.Column("out_dir", sa.Text),
    sa.Column("verification", sa.Text),      # JSON: LLM report outcome / verify result, if any
    sa.Column("trends", sa.Text),            # JSON {finding name: new|resolved|worse|better|unchanged}
    sa.Column("review", sa.Text),            # JSON {decision, reason, at}
    sa.Column("error", sa.Text),
    sa.Column("host", sa.String(255)),       # who runs it: a serve start-up only marks runs whose
    sa.Column("pid", sa.Integer),            # process is gone as interrupted
)

run_findings = sa.Table(
    "wd_run_findings", metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("wd_runs.id"), primary_key=True),
    sa.Column("name", sa.String(400), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("failing", sa.BigInteger),
    sa.Column("total", sa.BigInteger),
    sa.Column("rate", sa.Float),
    sa.Column("observed", sa.Float),
    sa.Column("finding", sa.Text),           # the whole finding, JSON
)

deliveries = sa.Table(
    "wd_deliveries", metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("wd_runs.id"), primary_key=True),
    sa.Column("channel", sa.String(32), primary_key=True),
    sa.Column("target", sa.String(400), primary_key=True),  # a recipient, a folder, a URL
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("last_error", sa.Text),
    sa.Column("updated_at", sa.String(40)),
    sa.Column("spec", sa.Text),              # JSON: the channel's configuration, to retry from the outbox
)

leases = sa.Table(
    "wd_leases", metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("holder", sa.String(128), nullable=False),   # the instance id of the leader
    sa.Column("host", sa.String(255)),
    sa.Column("pid", sa.Integer),
    sa.Column("token", sa.BigInteger, nullable=False),     # fencing token: +1 at every change of leader
    sa.Column("acquired_at", sa.Double),                    # epoch seconds, the database's clock
    sa.Column("renewed_at", sa.Double),
    sa.Column("expires_at", sa.Double, nullable=False),
)

members = sa.Table(
    "wd_members", metadata,
    sa.Column("id", sa.String(128), primary_key=True),     # instance id: host, pid and a random suffix
    sa.Column("host", sa.String(255)),
    sa.Column("pid", sa.Integer),
    sa.Column("role", sa.String(16), nullable=False),      # leader | standby
    sa.Column("started_at", sa.Double),
    sa.Column("seen_at", sa.Double, nullable=False),
)

stops = sa.Table(
    "wd_stops", metadata,                                  # a row per `serve` that stopped by itself (not a crash)
    sa.Column("instance", sa.String(128), primary_key=True),
    sa.Column("host", sa.String(255)),
    sa.Column("pid", sa.Integer),
    sa.Column("token", sa.BigInteger),                     # the lease token it gave up (0: it was standing by)
    sa.Column("stopped_at", sa.Double, nullable=False),    # epoch seconds, the database's clock
    sa.Column("reason", sa.String(200)),                   # SIGTERM received | --for 35s elapsed | stop requested
    sa.Column("outcome", sa.String(16)),                   # stopping | clean | forced (runs were abandoned)
)

ticks = sa.Table(
    "wd_ticks", metadata,
    sa.Column("audit", sa.String(200), primary_key=True),
    sa.Column("scheduled_at", sa.String(40), primary_key=True),  # the tick, UTC ISO 8601
    sa.Column("run_id", sa.String(64), nullable=False),
    sa.Column("claimed_by", sa.String(128)),
    sa.Column("token", sa.BigInteger),
    sa.Column("claimed_at", sa.String(40)),
)

alerts = sa.Table(
    "wd_alerts", metadata,                                 # what each destination was last told (remind_after)
    # SHA-256 of audit, destination and check: the three are too long together for a MariaDB/MySQL key
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("audit", sa.String(200), nullable=False),
    sa.Column("destination", sa.String(400), nullable=False),  # channel:target, as the deliveries record it
    sa.Column("name", sa.String(400), nullable=False),     # the check
    sa.Column("status", sa.String(16), nullable=False),    # fail | warn | error, as announced
    sa.Column("announced_at", sa.String(40), nullable=False),    # UTC ISO 8601
    sa.Column("run_id", sa.String(64)),                    # the run whose delivery announced it
    sa.Index("wd_alerts_destination", "audit", "destination"),
)
