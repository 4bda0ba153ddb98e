"""A private PostgreSQL server that checks passwords (scram-sha-256), for tests that must prove a password
reaches the server intact: the machine's server trusts loopback and would accept any password.

``initdb`` runs as the ``postgres`` system user (PostgreSQL refuses root) into a temporary folder, the server
listens on a free loopback port, and :meth:`PasswordServer.stop` removes it all. About two seconds.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psycopg
from psycopg import sql

ADMIN_PASSWORD = "admin-pw-for-tests"


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} is not installed (apt-get install postgresql)")
    return found[-1]


def _as_postgres(*args: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else list(args)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PasswordServer:
    """A throw-away PostgreSQL cluster with password authentication on 127.0.0.1."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="wd-pgauth-"))
        os.chmod(self.dir, 0o777)
        pwfile = self.dir / "pw"
        pwfile.write_text(ADMIN_PASSWORD + "\n")
        os.chmod(pwfile, 0o644)
        self.port = _free_port()
        data = self.dir / "data"
        subprocess.run(_as_postgres(_bin("initdb"), "-D", str(data), "-U", "postgres", "--auth=scram-sha-256",
                                    f"--pwfile={pwfile}", "-E", "UTF8", "--no-sync"),
                       check=True, capture_output=True, timeout=120)
        subprocess.run(_as_postgres(_bin("pg_ctl"), "-D", str(data), "-l", str(self.dir / "log"), "-w", "-o",
                                    f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off",
                                    "start"), check=True, capture_output=True, timeout=120)
        self._data = data

    def admin(self) -> psycopg.Connection:
        return psycopg.connect(host="127.0.0.1", port=self.port, user="postgres", password=ADMIN_PASSWORD,
                               dbname="postgres", autocommit=True)

    def add_role(self, name: str, password: str) -> None:
        """A login role with ``password`` that may read a table ``items`` (id, sku; 2 NULL skus of 4)."""
        with self.admin() as conn:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(name),
                                                                          sql.Literal(password)))
            conn.execute(sql.SQL("GRANT SELECT ON items TO {}").format(sql.Identifier(name)))

    def stop(self) -> None:
        subprocess.run(_as_postgres(_bin("pg_ctl"), "-D", str(self._data), "-m", "immediate", "-w", "stop"),
                       capture_output=True, timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)


def password_server() -> PasswordServer:
    server = PasswordServer()
    with server.admin() as conn:
        conn.execute("CREATE TABLE items (id int, sku text)")
        conn.execute("INSERT INTO items VALUES (1, NULL), (2, 'b'), (3, NULL), (4, 'd')")
    return server
