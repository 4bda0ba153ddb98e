"""A real Spark Thrift Server (HiveServer2) in local mode for tests and benchmarks, and Spark test databases.

:class:`ThriftServer` starts the server that ships with the ``pyspark`` package (``spark-submit --class
org.apache.spark.sql.hive.thriftserver.HiveThriftServer2``) on a free loopback port, with its warehouse
and Derby metastore under a scratch folder, 1 GB of driver memory, two shuffle partitions and no UI,
and stops it (the whole process group) at the end. ``$WATCHDOG_TEST_SPARK_URL`` (an admin ``hive://``
URL) uses a running server instead. :func:`create_spark_database` makes a fresh Spark database (schema)
on it, loaded through a plain PyHive connection (not the sandbox), and drops it afterwards.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlglot import exp

from tests.dbs import TestDatabase

SPARK_URL_ENV = "WATCHDOG_TEST_SPARK_URL"
START_TIMEOUT_S = 240
#: portable column types (tests/dbs.py) -> Spark SQL
SPARK_TYPES = {"int": "INT", "bigint": "BIGINT", "text": "STRING", "real": "DOUBLE", "timestamp": "TIMESTAMP",
               "date": "DATE"}
#: rows per INSERT statement (each statement is a Spark job)
INSERT_BATCH = 2000


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ThriftServer:
    """``with ThriftServer(workdir) as server: server.url`` -- a Spark Thrift Server for the block."""

    def __init__(self, workdir: Path, *, driver_memory: str = "1g", cores: int = 2, nice: int = 0):
        self.workdir = Path(workdir)
        self.port = _free_port()
        self.url = f"hive://127.0.0.1:{self.port}/default"
        self.driver_memory, self.cores, self.nice = driver_memory, cores, nice
        self._proc: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        work = self.workdir
        java_opts = f"-Dderby.system.home={work / 'derby'} -Djava.io.tmpdir={work / 'tmp'}"
        cmd = [
            str(spark_home() / "bin" / "spark-submit"),
            "--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
            "--master", f"local[{self.cores}]", "--driver-memory", self.driver_memory,
            "--name", "watchdog-test-thrift",
            "--conf", "spark.ui.enabled=false",
            "--conf", "spark.sql.shuffle.partitions=2",
            "--conf", f"spark.sql.warehouse.dir={work / 'warehouse'}",
            "--conf", f"spark.local.dir={work / 'tmp'}",
            "--conf", f"spark.driver.extraJavaOptions={java_opts}",
            "--conf", "spark.sql.session.timeZone=UTC",
            "--hiveconf", f"hive.server2.thrift.port={self.port}",
            "--hiveconf", "hive.server2.thrift.bind.host=127.0.0.1",
            "--hiveconf",
            f"javax.jdo.option.ConnectionURL=jdbc:derby:;databaseName={work / 'metastore_db'};create=true",
            "spark-internal",
        ]
        return (["nice", "-n", str(self.nice)] if self.nice else []) + cmd

    def start(self) -> ThriftServer:
        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            raise RuntimeError("Spark needs Java 17: install openjdk-17-jre-headless (.ci/run does)")
        (self.workdir / "tmp").mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1"}
        log = (self.workdir / "thrift-server.log").open("wb")
        self._proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, env=env,
                                      cwd=self.workdir, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"the Spark Thrift server exited ({self._proc.returncode}); see "
                                   f"{self.workdir / 'thrift-server.log'}")
            if _answers(self.port):
                return self
            time.sleep(1)
        self.stop()
        raise RuntimeError(f"the Spark Thrift server did not listen within {START_TIMEOUT_S}s")

    def stop(self) -> None:
        if self._proc is None or self._proc.poll() is not None:
            return
        os.killpg(self._proc.pid, signal.SIGTERM)
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait(timeout=10)

    def __enter__(self) -> ThriftServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _answers(port: int) -> bool:
    """True when a HiveServer2 session opens and runs SELECT 1."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            pass
    except OSError:
        return False
    from pyhive import hive

    try:
        conn = hive.connect(host="127.0.0.1", port=port, database="default")
        try:
            cur = conn.cursor()
            cur.execute("SELECT 1")
            return cur.fetchall() == [(1,)]
        finally:
            conn.close()
    except Exception:  # noqa: BLE001 - still starting
        return False


def spark_literal(value: Any) -> exp.Expr:
    """A Python value as a Spark SQL literal (rendered by sqlglot, escapes included)."""
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float)):
        return exp.Literal.number(repr(value) if isinstance(value, float) else value)
    if isinstance(value, Decimal):  # an exact literal: Spark reads 10.50 as DECIMAL(4,2), safe into wider decimals
        return exp.Literal.number(str(value))
    if isinstance(value, datetime):
        return exp.cast(exp.Literal.string(value.isoformat(sep=" ")), "timestamp")
    if isinstance(value, date):
        return exp.cast(exp.Literal.string(value.isoformat()), "date")
    return exp.Literal.string(str(value))


class SparkDatabase(TestDatabase):
    """A Spark database (schema) on the Thrift server; tables are Parquet, loaded with INSERT ... VALUES."""

    __test__ = False

    def quote(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def run(self, *statements: str) -> None:
        # PyHive formats the text with the (empty) parameters SQLAlchemy passes: a literal % is written %%
        super().run(*(s.replace("%", "%%") for s in statements))

    def create_table(self, name: str, columns: dict[str, str], rows: Iterable[Sequence[Any]] = ()) -> None:
        cols = ", ".join(f"{self.quote(c)} {SPARK_TYPES.get(t, t)}" for c, t in columns.items())
        self.run(f"CREATE TABLE {self.quote(name)} ({cols}) USING parquet")
        self.insert(name, list(columns), rows)

    def insert(self, name: str, columns: list[str], rows: Iterable[Sequence[Any]]) -> None:
        rows = [tuple(r) for r in rows]
        for start in range(0, len(rows), INSERT_BATCH):
            values = ", ".join(
                "(" + ", ".join(spark_literal(v).sql("spark") for v in row) + ")"
                for row in rows[start:start + INSERT_BATCH])
            cols = ", ".join(self.quote(c) for c in columns)
            self.run(f"INSERT INTO {self.quote(name)} ({cols}) VALUES {values}")


def create_spark_database(admin_url: str, prefix: str = "wd_spark") -> SparkDatabase:
    """A fresh Spark database on the server of ``admin_url`` (dropped with CASCADE on close())."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    utc = {"configuration": {"set:hiveconf:spark.sql.session.timeZone": "UTC"}}  # timestamps load as UTC
    admin = sa.create_engine(admin_url, connect_args=utc)
    with admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)

    def drop() -> None:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} CASCADE")
        admin.dispose()

    return SparkDatabase("spark", url, sa.create_engine(url, connect_args=utc), drop)
