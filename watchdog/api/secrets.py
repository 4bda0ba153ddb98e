"""The secrets one Python API call was given, masked in everything the call returns or raises.

Each call collects the secrets of its own arguments (a URL's password and secret query values, a webhook
URL, every ``SecretStr`` of a configuration) into a :class:`CallSecrets` and masks them itself, so what one
call returns does not depend on what other calls in the process registered; :func:`watchdog.redact.redact`
adds its rules for any URL in a text on top.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import fields, is_dataclass, replace
from typing import Any
from urllib.parse import unquote

from watchdog.redact import MASK, redact

#: a query parameter whose value is a secret (as :mod:`watchdog.redact` reads them)
_SECRET_NAME = re.compile(r"passfile|.*(?:pass|pwd|secret|token|key|auth|credential|signature).*", re.IGNORECASE)
_WEB = ("http://", "https://")


class CallSecrets:
    """Secrets of one call; :meth:`mask` applies to texts, findings, results and exceptions alike."""

    def __init__(self) -> None:
        self.values: set[str] = set()

    def add(self, value: str | None) -> None:
        if value and len(value) >= 3:
            self.values.update({value, unquote(value)})

    def add_url(self, url: str) -> None:
        """The password (everything between ``scheme://user:`` and the authority's last ``@``) and the values of
        secret query parameters; a web URL (a webhook) is a secret whole."""
        scheme, sep, rest = url.partition("://")
        if not sep:
            return
        if url.lower().startswith(_WEB):
            self.add(url)
        first_at = rest.find("@")
        if first_at >= 0:
            ends = [i for i in (rest.find(c, first_at) for c in "/?#") if i >= 0]
            userinfo = rest[:rest.rfind("@", 0, min(ends) if ends else len(rest))]
            _user, colon, password = userinfo.partition(":")
            if colon:
                self.add(password)
        _path, _q, query = rest.partition("#")[0].partition("?")
        for pair in re.split(r"[&;]", query):
            name, _eq, value = pair.partition("=")
            if _SECRET_NAME.fullmatch(unquote(name)):
                self.add(value)

    def add_model(self, model: Any) -> None:
        """Every ``SecretStr`` (and the token of a ``Bearer <token>`` header) and every ``url`` field of a
        configuration model, walked whole."""
        from pydantic import BaseModel, SecretStr

        if isinstance(model, SecretStr):
            value = model.get_secret_value()
            self.add(value)
            for part in value.split()[1:]:
                self.add(part)
        elif isinstance(model, BaseModel):
            for name in type(model).model_fields:
                value = getattr(model, name)
                if name in ("url", "base_url") and isinstance(value, str):
                    self.add_url(value)
                else:
                    self.add_model(value)
        elif isinstance(model, dict):
            for value in model.values():
                self.add_model(value)
        elif isinstance(model, (list, tuple)):
            for value in model:
                self.add_model(value)

    def text(self, text: str) -> str:
        out = redact(text)
        for secret in sorted(self.values, key=len, reverse=True):
            out = out.replace(secret, MASK)
        return out

    def mask(self, value: Any) -> Any:
        """``value`` with every string in it masked: dataclasses (findings, results) rebuilt, containers copied."""
        if isinstance(value, str):
            return self.text(value)
        if is_dataclass(value) and not isinstance(value, type):
            return replace(value, **{f.name: self.mask(getattr(value, f.name)) for f in fields(value) if f.init})
        if isinstance(value, dict):
            return {self.mask(k): self.mask(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.mask(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.mask(v) for v in value)
        return value

    def exception(self, exc: BaseException) -> BaseException:
        """``exc`` itself (its type is what callers catch) with its message and attributes masked."""
        exc.args = tuple(self.mask(a) for a in exc.args)
        for name, value in list(vars(exc).items()):
            with suppress(AttributeError, TypeError):
                setattr(exc, name, self.mask(value))
        return exc

    @contextmanager
    def guard(self) -> Iterator[CallSecrets]:
        """Raise what the block raises with the secrets masked, its chain dropped (a cause may quote them)."""
        try:
            yield self
        except BaseException as exc:
            raise self.exception(exc).with_traceback(exc.__traceback__) from None
