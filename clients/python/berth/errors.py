"""Typed errors of the Berth client.

Every error the client raises is a :class:`BerthError`. Errors answered by the
server carry its HTTP status (``status``), its error code (``code``, e.g.
``"invalid_argument"``) and its message (``message``, e.g. ``"tasks: must be
1..1024, got 0"``), so that ``except berth.BadRequest as e: print(e)`` shows
exactly what the server said.
"""
from __future__ import annotations

import re
from typing import Optional

__all__ = [
    "BerthError",
    "BadRequest",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "Conflict",
    "ServerError",
    "ConnectionFailed",
    "WaitTimeout",
    "error_for_status",
]


class BerthError(Exception):
    """Base class of every error of this client.

    Attributes:
        message: the server's message (or the client's, for errors that never
            reached the server).
        status: the HTTP status code, or None when there was no response.
        code: the server's error code (``invalid_argument``, ``not_found``,
            ...), or None.
    """

    def __init__(self, message: str, status: Optional[int] = None, code: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code

    def __str__(self) -> str:
        return self.message if self.status is None else f"{self.message} (HTTP {self.status})"


class BadRequest(BerthError):
    """400: the request was invalid; the message names the field or value."""

    _UNKNOWN = re.compile(r"^unknown field '([^']*)'")
    _FIELD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:[.\[][^:\s]*)?: ")

    @property
    def field(self) -> Optional[str]:
        """The top-level field the server's message names, if it names one.

        ``"unknown field 'gpuz' (known: ...)"`` gives ``"gpuz"``;
        ``"tasks: must be 1..1024, got 0"`` gives ``"tasks"``;
        ``"env.HOME: ..."`` and ``"command[2]: ..."`` give ``"env"`` and
        ``"command"``.
        """
        match = self._UNKNOWN.match(self.message) or self._FIELD.match(self.message)
        return match.group(1) if match else None


class Unauthorized(BerthError):
    """401: no token, or a token the server does not know (or revoked)."""


class Forbidden(BerthError):
    """403: the token is valid but may not do this (another user's job, an admin route)."""


class NotFound(BerthError):
    """404: no such job (or node, or route)."""


class Conflict(BerthError):
    """409: the request conflicts with the current state (e.g. cancelling an ended job)."""


class ServerError(BerthError):
    """5xx, or a response the client cannot understand."""


class ConnectionFailed(BerthError):
    """The server could not be reached or did not answer in time."""


class WaitTimeout(BerthError, TimeoutError):
    """:meth:`berth.Client.wait` ran out of time; ``job`` is the last state seen."""

    def __init__(self, message: str, job=None):
        super().__init__(message)
        self.job = job


_BY_STATUS = {400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict}


def error_for_status(status: int, message: str, code: Optional[str] = None) -> BerthError:
    """The typed error for an HTTP error status (other 4xx: plain BerthError)."""
    if status in _BY_STATUS:
        return _BY_STATUS[status](message, status, code)
    if status >= 500:
        return ServerError(message, status, code)
    return BerthError(message, status, code)
