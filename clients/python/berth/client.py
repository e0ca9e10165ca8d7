"""The Berth HTTP client (standard library only).

Talks to the server's JSON API under ``/api/v1`` with a bearer token. Every
request has a timeout; every failure is a typed :class:`berth.BerthError`
carrying the server's message and HTTP status.

Given several addresses (a leader and its standbys), requests follow the
leader as the ``berth`` CLI does (docs/cli.md): a refused connection or a
standby's 503 moves a request on, to the leader the standby names in
``X-Berth-Leader`` or to the next address, for up to 15 s.
"""
from __future__ import annotations

import codecs
import datetime
import http.client
import ipaddress
import json
import os
import secrets
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import errors
from .errors import BerthError, Conflict, ConnectionFailed, NotFound, ServerError, WaitTimeout
from .models import Explanation, Job, parse_time

__all__ = ["Client", "DEFAULT_ADDR", "DEV_TOKEN_FILE"]

#: Where ``berth dev`` listens unless told otherwise.
DEFAULT_ADDR = "http://127.0.0.1:8080"
#: Where ``berth dev`` (run in the current directory) writes the admin token.
DEV_TOKEN_FILE = os.path.join(".berth-dev", "admin-token")

_UNSET: Any = object()
_USER_AGENT = "berth-python/0.1"
#: The header a standby names the leader in.
_LEADER_HEADER = "X-Berth-Leader"
#: How long one request keeps trying the servers (a standby takes over within
#: 10 s), and the backoff between rounds of them.
_PATIENCE_S = 15.0
_FIRST_BACKOFF_S = 0.1
_MAX_BACKOFF_S = 1.0


def _normalize(addr: str) -> str:
    addr = addr.strip()
    if "://" not in addr:
        addr = "http://" + addr
    return addr.rstrip("/")


def _addresses(addr: Union[str, Sequence[str]]) -> List[str]:
    """A list of server URLs from a list or a comma-separated string."""
    items = addr.split(",") if isinstance(addr, str) else [str(a) for a in addr]
    if not items or any(not item.strip() for item in items):
        raise BerthError(f"addr: expected server URLs separated by commas, got {addr!r}")
    return [_normalize(item) for item in items]


class _Moved(Exception):
    """One attempt failed in a way that moves the request to another server."""

    def __init__(self, error: str, leader: Optional[str] = None, standby: bool = False):
        super().__init__(error)
        self.error, self.leader, self.standby = error, leader, standby


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _seconds(value: Any) -> Any:
    """timedelta -> seconds (the API's ``*_s`` fields); anything else unchanged."""
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    return value


def _models(value: Union[None, str, Sequence[str]]) -> Optional[str]:
    """gpu_type as the API takes it: one model, or several joined with '|'."""
    if value is None or isinstance(value, str):
        return value
    return "|".join(value)


def _mount(mount: Union[str, Dict[str, Any]]) -> Dict[str, Any]:
    """A mount object from Pyxis's ``"SRC[:DST[:ro|rw]]"`` (a dict passes as is)."""
    if not isinstance(mount, str):
        return dict(mount)
    parts = mount.split(":")
    if not 1 <= len(parts) <= 3 or (len(parts) == 3 and parts[2] not in ("ro", "rw")):
        raise ValueError(f"container mount: expected SRC[:DST[:ro|rw]], got {mount!r}")
    return {"source": parts[0], "target": parts[1] if len(parts) > 1 else parts[0],
            "read_only": len(parts) == 3 and parts[2] == "ro"}


def _container(container: Union[None, str, Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The ``container`` object: an image name alone, or the object itself."""
    if container is None:
        return None
    if isinstance(container, str):
        return {"image": container}
    body = {key: value for key, value in container.items() if value is not None}
    if "mounts" in body:
        body["mounts"] = [_mount(m) for m in body["mounts"]]
    return body


def _hostlist(value: Union[None, str, Sequence[str]]) -> Union[None, str, List[str]]:
    """nodelist / exclude: a hostlist string as is, else a list of names (or hostlists)."""
    if value is None or isinstance(value, str):
        return value
    return [str(name) for name in value]


def _config_dir() -> str:
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return os.path.join(xdg, "berth")
    return os.path.join(os.environ.get("HOME") or os.path.expanduser("~"), ".config", "berth")


def client_config_path() -> str:
    """The config file the ``berth`` CLI reads: ``$BERTH_CONFIG``, else
    ``$XDG_CONFIG_HOME/berth/config.toml``, else ``~/.config/berth/config.toml``."""
    return os.environ.get("BERTH_CONFIG") or os.path.join(_config_dir(), "config.toml")


def dev_cluster_path() -> str:
    """Where ``berth dev`` announces its URL and admin token file: ``dev.toml``
    beside the config file."""
    return os.path.join(_config_dir(), "dev.toml")


def _parse_toml(text: str, path: str) -> Dict[str, Any]:
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - older Pythons: the file's simple form
        table: Dict[str, Any] = {}
        for number, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, sep, value = line.partition("=")
            try:
                table[key.strip()] = json.loads(value.strip()) if sep else None
            except ValueError:
                raise BerthError(f"{path}:{number}: expected key = \"value\"") from None
        return table
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise BerthError(f"{path}: {error}") from None


def _read_endpoint_file(path: str) -> Tuple[Optional[str], Optional[str]]:
    """(servers, token) from a config or dev cluster file as the CLI reads
    it; (None, None) when there is no such file."""
    try:
        with open(path, encoding="utf-8") as f:
            table = _parse_toml(f.read(), path)
    except FileNotFoundError:
        return None, None
    except OSError as error:
        raise BerthError(f"{path}: {error}") from None
    for key in table:
        if key not in ("server", "token", "token_file"):
            raise BerthError(f"{path}: unknown key {key!r} (known: server, token, token_file)")
    server = table.get("server")
    if isinstance(server, list):
        if not server or not all(isinstance(item, str) for item in server):
            raise BerthError(f"{path}: server: expected strings (URLs)")
        server = ",".join(server)
    token = table.get("token") or None
    if not token and table.get("token_file"):
        try:
            with open(table["token_file"], encoding="utf-8") as f:
                token = f.readline().strip()
        except OSError as error:
            raise BerthError(f"{path}: token_file: {error}") from None
        if not token:
            raise BerthError(f"{path}: token_file {table['token_file']} is empty")
    return server or None, token


def _resolve_endpoint(addr: Union[None, str, Sequence[str]],
                      token: Optional[str]) -> Tuple[Union[str, Sequence[str]], Optional[str]]:
    """The server and token in the ``berth`` CLI's order (docs/cli.md):
    arguments, ``BERTH_ADDR`` / ``BERTH_TOKEN``, the config file, the dev
    cluster ``berth dev`` announced (its token only with its own server),
    then ``http://127.0.0.1:8080`` with ``.berth-dev/admin-token``."""
    addr = addr or os.environ.get("BERTH_ADDR") or None
    token = token or os.environ.get("BERTH_TOKEN") or None
    config_server, config_token = _read_endpoint_file(client_config_path())
    addr = addr or config_server
    token = token or config_token
    if not addr:
        dev_server, dev_token = _read_endpoint_file(dev_cluster_path())
        addr = dev_server
        if dev_server and not token:
            token = dev_token
    if not token:
        try:
            with open(DEV_TOKEN_FILE, encoding="utf-8") as f:
                token = f.readline().strip() or None
        except OSError:
            token = None
    return addr or DEFAULT_ADDR, token


def _unix(value: Union[None, int, float, datetime.datetime]) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        return int(value.timestamp())
    return int(value)


class Client:
    """A connection to a Berth server.

    Args:
        addr: the server URL, e.g. ``http://gpu-head:8080`` (``host:port``
            means ``http://host:port``), or several (a leader and its
            standbys): a list, or a string of URLs separated by commas.
            Default, as the ``berth`` CLI finds it: ``$BERTH_ADDR``, else
            the config file's ``server`` (``$BERTH_CONFIG``, else
            ``~/.config/berth/config.toml``), else the dev cluster that
            ``berth dev`` announced in ``~/.config/berth/dev.toml``, else
            ``http://127.0.0.1:8080``.
        token: an API token. Default: ``$BERTH_TOKEN``, else the config
            file's ``token`` or ``token_file``, else the dev cluster's admin
            token (with the dev cluster's server only), else
            ``.berth-dev/admin-token`` under the current directory.
        timeout: seconds for every request (connect and each read).
        ssl_context: an ``ssl.SSLContext`` for ``https://`` servers with a
            private CA.

    Raises:
        BerthError: when no token is given and none is found.
    """

    def __init__(
        self,
        addr: Union[None, str, Sequence[str]] = None,
        token: Optional[str] = None,
        *,
        timeout: float = 30.0,
        ssl_context: Any = None,
    ):
        addr, token = _resolve_endpoint(addr, token)
        self.addrs = _addresses(addr)
        #: Where requests go now: the first address, then the one that answered last.
        self.addr = self.addrs[0]
        self._position = 0  # in addrs: the last listed address used
        if not token:
            raise BerthError(
                "no token: pass token=, set BERTH_TOKEN, write a config file at "
                f"{client_config_path()}, or start `berth dev`"
            )
        self._token = token.strip()
        self.timeout = timeout
        self._ssl_context = ssl_context
        self._openers: Dict[str, Any] = {}

    def _opener_for(self, addr: str) -> Any:
        opener = self._openers.get(addr)
        if opener is None:
            handlers: List[Any] = []
            host = urllib.parse.urlsplit(addr).hostname or ""
            if _is_loopback(host):
                handlers.append(urllib.request.ProxyHandler({}))  # never send loopback via a proxy
            if self._ssl_context is not None:
                handlers.append(urllib.request.HTTPSHandler(context=self._ssl_context))
            opener = self._openers[addr] = urllib.request.build_opener(*handlers)
        return opener

    def __repr__(self) -> str:
        if len(self.addrs) > 1:
            return f"Client(addrs={self.addrs!r})"
        return f"Client(addr={self.addr!r})"

    # --- transport ---

    def _send(
        self,
        method: str,
        path: str,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        auth: bool = True,
        safe: Optional[bool] = None,
    ) -> Tuple[int, bytes, http.client.HTTPMessage]:
        """One request; returns (status, body bytes, headers) of a 2xx answer.

        Follows the leader among ``addrs``: a refused connection or a
        standby's 503 moves the request to the leader the standby names, or
        to the next address; each address once a round, then rounds with a
        backoff (0.1 s doubling to 1 s), for up to 15 s. With a single
        address that no answer led away from, a failure is raised at once.
        A connection lost once the request may have arrived is resent only
        when ``safe`` (default: every method but POST).
        """
        if safe is None:
            safe = method != "POST"
        deadline = time.monotonic() + _PATIENCE_S
        backoff = _FIRST_BACKOFF_S
        failures: Dict[str, str] = {}  # each address's last error, in the order tried
        swept = set()  # tried since the last backoff
        several = len(self.addrs) > 1
        while True:
            addr = self.addr
            swept.add(addr)
            try:
                return self._send_once(addr, method, path, query, body, auth, safe)
            except _Moved as moved:
                failures[addr] = moved.error
                several = several or moved.standby
                last = moved
            except ConnectionFailed as error:
                # Lost once the request may have arrived, and not safe to resend.
                if len(failures) == 0:
                    raise
                failures[addr] = error.message
                raise ConnectionFailed(self._unreachable(failures)) from None
            if last.leader and last.leader != addr:
                self._move_to(last.leader)
            else:
                self._move_to(self.addrs[(self._position + 1) % len(self.addrs)])
            if self.addr not in swept:
                continue
            if not several or time.monotonic() + backoff > deadline:
                if len(failures) == 1 and not last.standby and last.__cause__ is not None:
                    raise last.__cause__ from None  # a single server: as before
                raise ConnectionFailed(self._unreachable(failures), status=None) from None
            time.sleep(backoff)
            backoff = min(backoff * 2, _MAX_BACKOFF_S)
            swept.clear()

    def _move_to(self, addr: str) -> None:
        self.addr = addr
        if addr in self.addrs:
            self._position = self.addrs.index(addr)

    @staticmethod
    def _unreachable(failures: Mapping[str, str]) -> str:
        if len(failures) == 1:
            (addr, error), = failures.items()
            return f"cannot reach {addr}: {error}"
        return "cannot reach any server: " + ", ".join(
            f"{addr} ({error})" for addr, error in failures.items())

    def _send_once(self, addr, method, path, query, body, auth, safe):
        """One attempt at ``addr``; raises _Moved to go on to another server."""
        url = addr + path
        if query:
            pairs = {k: v for k, v in query.items() if v is not None}
            if pairs:
                url += "?" + urllib.parse.urlencode(pairs)
        headers = {"User-Agent": _USER_AGENT, "Accept": "application/json"}
        if auth:
            headers["Authorization"] = "Bearer " + self._token
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        elif method in ("POST", "PUT"):
            data = b""  # the server wants a Content-Length, even 0
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with self._opener_for(addr).open(request, timeout=self.timeout) as response:
                return response.status, response.read(), response.headers
        except urllib.error.HTTPError as error:
            try:
                payload = error.read()
            except (OSError, http.client.HTTPException):
                payload = b""
            failure = self._error(error.code, error.reason, payload, method, path)
            if error.code == 503:
                leader = error.headers.get(_LEADER_HEADER) if error.headers else None
                if leader:
                    leader = _normalize(leader)
                    raise _Moved(f"standby; the leader is {leader}", leader, True) from failure
                if (failure.message or "").startswith("standby"):
                    raise _Moved("standby; leader unknown", None, True) from failure
            raise failure from None
        except urllib.error.URLError as error:
            # Raised while connecting or sending: the request never arrived whole.
            reason = error.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                reason = f"no answer within {self.timeout:g} s"
            raise _Moved(str(reason)) from ConnectionFailed(f"cannot reach {addr}: {reason}")
        except (socket.timeout, TimeoutError):
            failure = ConnectionFailed(
                f"{method} {path}: no answer from {addr} within {self.timeout:g} s")
            if not safe:
                raise failure from None
            raise _Moved(f"no answer within {self.timeout:g} s") from failure
        except (OSError, http.client.HTTPException) as error:
            failure = ConnectionFailed(f"{method} {path}: connection to {addr} failed: {error}")
            if not safe:
                raise failure from None
            raise _Moved(f"connection lost: {error}") from failure

    @staticmethod
    def _error(status: int, reason: Any, payload: bytes, method: str, path: str) -> BerthError:
        """The typed error for an error response: the server's message if it sent one."""
        code = None
        message = None
        try:
            parsed = json.loads(payload.decode("utf-8")) if payload else None
        except (UnicodeDecodeError, ValueError):
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            code = parsed["error"].get("code")
            message = parsed["error"].get("message")
        if not message:
            text = payload.decode("utf-8", "replace").strip()
            message = f"{method} {path}: " + (text[:500] if text else f"{status} {reason}")
        return errors.error_for_status(status, message, code)

    def _json(self, method: str, path: str, query=None, body=None, safe=None) -> Any:
        status, payload, _ = self._send(method, path, query, body, safe=safe)
        try:
            return json.loads(payload.decode("utf-8")) if payload else None
        except (UnicodeDecodeError, ValueError):
            raise ServerError(
                f"{method} {path}: the server answered {status} with invalid JSON", status
            ) from None

    # --- jobs ---

    def submit(
        self,
        command: Union[None, str, Sequence[str]] = None,
        script: Union[None, str, "os.PathLike[str]"] = None,
        gpus: Optional[int] = _UNSET,
        tasks: Optional[int] = 1,
        *,
        gpu_type: Union[None, str, Sequence[str]] = None,
        constraint: Optional[str] = None,
        nodelist: Union[None, str, Sequence[str]] = None,
        exclude: Union[None, str, Sequence[str]] = None,
        wait_for_nodes: Optional[bool] = None,
        container: Union[None, str, Dict[str, Any]] = None,
        **fields: Any,
    ) -> int:
        """Submits a job and returns its id.

        Args:
            command: the program and its arguments, a list (``["python3",
                "train.py"]``, run as is), or a string run by ``sh -c``
                (``"python3 train.py --lr 0.1 > out.txt"``), as ``berth
                submit -- sh -c`` would.
            script: instead of ``command``, a script's text (or a path to one)
                run by the agent.
            gpus: whole GPUs per task (default 1; 0 for CPU-only). Omitted
                when ``gpu_milli`` (a share of one GPU) is given.
            tasks: tasks of the job (default 1).
            gpu_type: a GPU model (``"H100-80GB"``), or several any one of
                which will do: a list, or a string joined with ``|``
                (``"A100-80GB|H100-80GB"``).
            constraint: node features as Slurm's ``--constraint`` writes
                them: ``"ib"``, ``"a100&ib"``, ``"h100|a100"``, ``"!spot"``,
                parentheses; ``"key=value"`` matches a node label.
            nodelist: run only on these nodes: a Slurm hostlist
                (``"gpu[01-04],gpu07"``) or a list of names.
            exclude: never on these nodes (the same forms).
            wait_for_nodes: accept the job even if no node registered now
                could ever host it (else that is a ``BadRequest``).
            container: run each task in a container: an image name
                (``"nvcr.io/nvidia/pytorch:24.01-py3"``), or the whole
                object: ``{"image": ..., "mounts": [{"source": "/data",
                "target": "/data", "read_only": True}] or ["/data:/data:ro"],
                "workdir": ..., "env": {...}, "entrypoint": [...],
                "mount_home": bool, "pull": "missing"|"never"|"always"}``.
                Host paths must be within the server's allow-list.
            **fields: any other field of ``POST /api/v1/jobs``: ``name``,
                ``cpus``, ``memory_mib``, ``priority`` (an
                integer or ``"low"``/``"normal"``/``"high"``), ``queue``,
                ``time_limit_s``, ``estimate_s``, ``grace_s`` (seconds, or a
                ``timedelta``), ``preemptible``, ``depends_on`` (ids or
                ``"afterok:ID"``/``"afterany:ID"``/``"afternotok:ID"``),
                ``array`` (``"0-9%2"``), ``env`` (dict), ``workdir``
                (default: this process's working directory, as the CLI's;
                none for a job in a container, which sees only its mounts),
                ``output`` and ``error`` (files for stdout and stderr,
                relative to ``workdir``, with Slurm's ``%j %x %u %A %a %N
                %t %%``), ``open_mode`` (``"append"`` or ``"truncate"``),
                ``retries``, ``hold``, ``idempotency_key``, ``gpu_milli``,
                ``gpus_in_one_group`` (each task's GPUs in one interconnect
                group of its node).
                None values are left out. The server rejects unknown fields.

        Returns:
            The job id; for an array (``array=...``), the id of its first
            job (:meth:`submit_ids` returns them all).

        Raises:
            BadRequest: the server rejected a field; ``str(e)`` and
                ``e.field`` name it. A job no registered node could ever
                host is refused so too, the message naming the field and
                what would fit (``"gpus: 8 per task, but the largest node
                has 4; ..."``), unless ``wait_for_nodes``.
        """
        return self.submit_ids(command, script, gpus, tasks, gpu_type=gpu_type,
                               constraint=constraint, nodelist=nodelist, exclude=exclude,
                               wait_for_nodes=wait_for_nodes, container=container,
                               **fields)[0]

    def submit_ids(
        self,
        command: Union[None, str, Sequence[str]] = None,
        script: Union[None, str, "os.PathLike[str]"] = None,
        gpus: Optional[int] = _UNSET,
        tasks: Optional[int] = 1,
        *,
        gpu_type: Union[None, str, Sequence[str]] = None,
        constraint: Optional[str] = None,
        nodelist: Union[None, str, Sequence[str]] = None,
        exclude: Union[None, str, Sequence[str]] = None,
        wait_for_nodes: Optional[bool] = None,
        container: Union[None, str, Dict[str, Any]] = None,
        **fields: Any,
    ) -> List[int]:
        """As :meth:`submit`, returning every id (one per array index)."""
        fields.update(gpu_type=_models(gpu_type), constraint=constraint,
                      nodelist=_hostlist(nodelist), exclude=_hostlist(exclude),
                      wait_for_nodes=wait_for_nodes, container=_container(container))
        body: Dict[str, Any] = {}
        if command is not None:
            # A string is a shell command line: run by a shell, as typed.
            body["command"] = (["sh", "-c", command] if isinstance(command, str)
                               else [str(a) for a in command])
        if script is not None:
            if isinstance(script, os.PathLike):
                with open(script, encoding="utf-8") as f:
                    script = f.read()
            body["script"] = script
        if gpus is _UNSET:
            gpus = None if fields.get("gpu_milli") is not None else 1
        if gpus is not None:
            body["gpus"] = gpus
        if tasks is not None:
            body["tasks"] = tasks
        for key, value in fields.items():
            if value is not None:
                body[key] = _seconds(value)
        # The job runs where its submitter is, as with `berth submit`; a
        # container sees only what it mounts, so there only when asked.
        if "container" not in body:
            body.setdefault("workdir", os.getcwd())
        # With a key, a submit sent again (its answer lost, or to a new
        # leader) returns the first one's jobs instead of queueing twice.
        body.setdefault("idempotency_key", "berth-py-" + secrets.token_hex(16))
        reply = self._json("POST", "/api/v1/jobs", body=body, safe=True)
        ids = reply.get("ids") if isinstance(reply, dict) else None
        if not ids:
            ids = [reply["id"]] if isinstance(reply, dict) and "id" in reply else None
        if not ids:
            raise ServerError(f"POST /api/v1/jobs: no job id in the answer: {reply!r}")
        return [int(i) for i in ids]

    def get(self, id: int) -> Job:
        """The job ``id``. Raises NotFound when there is none."""
        return Job.from_json(self._json("GET", f"/api/v1/jobs/{int(id)}"))

    def list(
        self,
        state: Optional[str] = None,
        user: Optional[str] = None,
        queue: Optional[str] = None,
        *,
        live: Optional[bool] = None,
        page_size: int = 500,
    ) -> List[Job]:
        """Every job matching the filters, in id order (follows the server's paging).

        Args:
            state: one state (``pending``, ``held``, ``running``, ...).
            user, queue: exact matches.
            live: True for only jobs that have not ended.
            page_size: jobs per request (1..1000).
        """
        return [job for job in self.iter_jobs(state, user, queue, live=live, page_size=page_size)]

    def iter_jobs(
        self,
        state: Optional[str] = None,
        user: Optional[str] = None,
        queue: Optional[str] = None,
        *,
        live: Optional[bool] = None,
        page_size: int = 500,
    ) -> Iterator[Job]:
        """As :meth:`list`, one page at a time (a generator)."""
        query: Dict[str, Any] = {"state": state, "user": user, "queue": queue, "limit": page_size}
        if live is not None:
            query["live"] = "true" if live else "false"
        while True:
            reply = self._json("GET", "/api/v1/jobs", query)
            for job in reply.get("jobs", []):
                yield Job.from_json(job)
            after = reply.get("next_after")
            if after is None:
                return
            query["after"] = after

    def cancel(self, id: int) -> None:
        """Cancels the job: a pending or held job ends at once, a running one is stopped
        (SIGTERM, its grace period, then SIGKILL).

        Raises:
            Forbidden: another user's job. Conflict: it already ended.
            NotFound: no such job.
        """
        self._json("POST", f"/api/v1/jobs/{int(id)}/cancel", safe=True)

    def release(self, id: int) -> None:
        """Releases a job submitted with ``hold=True``.

        Raises:
            Conflict: the job is not held by a user. NotFound: no such live job.
        """
        self._json("POST", f"/api/v1/jobs/{int(id)}/release", safe=True)

    def hold(self, id: int) -> None:
        """Holds a job that has not started: it waits until :meth:`release`
        (Slurm's ``scontrol hold``).

        Raises:
            Conflict: the job has started. Forbidden: another user's job.
            NotFound: no such live job.
        """
        self._json("POST", f"/api/v1/jobs/{int(id)}/hold", safe=True)

    def update(
        self,
        id: int,
        *,
        time_limit_s: Optional[float] = None,
        queue: Optional[str] = None,
        priority: Optional[Any] = None,
    ) -> Job:
        """Changes a job that has not started (Slurm's ``scontrol update``):
        its time limit and queue within the queue's rules, its priority (an
        admin only). Returns the job as it stands now.

        Raises:
            BadRequest: a bad value, named. Forbidden: a queue rule, or a
            priority from a user. Conflict: the job has started.
        """
        body: Dict[str, Any] = {}
        if time_limit_s is not None:
            body["time_limit_s"] = time_limit_s
        if queue is not None:
            body["queue"] = queue
        if priority is not None:
            body["priority"] = priority
        return Job.from_json(self._json("PATCH", f"/api/v1/jobs/{int(id)}", body=body))

    def checkpoint(self, id: int) -> Optional[datetime.datetime]:
        """Says the running job saved a checkpoint just now: a preemption then
        picks victims by the work each would lose, and this one loses only what
        it did since. Returns the time the server recorded. (A task may instead
        touch the file named by its ``BERTH_CHECKPOINT_FILE``.)

        Raises:
            Conflict: the job is not running. Forbidden: another user's job.
            NotFound: no such live job.
        """
        reply = self._json("POST", f"/api/v1/jobs/{int(id)}/checkpoint", safe=True)
        return parse_time(reply.get("last_checkpoint"))

    def explain(self, id: int) -> Explanation:
        """Why the job is where it is: reason, message, queue position, blocker, ETA."""
        return Explanation.from_json(self._json("GET", f"/api/v1/jobs/{int(id)}/explain"))

    def wait(self, id: int, timeout: Optional[float] = None, poll: float = 1.0) -> Job:
        """Waits until the job ends (succeeded, failed, cancelled or timeout) and returns it.

        Args:
            timeout: seconds to wait at most (None: forever).
            poll: seconds between looks.

        Raises:
            WaitTimeout: the job had not ended within ``timeout``; ``e.job``
                is the last state seen.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            job = self.get(id)
            if job.terminal:
                return job
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WaitTimeout(
                        f"job {job.id} is still {job.state} after {timeout:g} s", job=job
                    )
                time.sleep(min(poll, left))
            else:
                time.sleep(poll)

    # --- logs ---

    def _log_chunk(self, id: int, task: int, offset: int) -> Tuple[bytes, int, bool]:
        """(bytes from offset, total log size, task running) from the logs route."""
        _, data, headers = self._send(
            "GET", f"/api/v1/jobs/{int(id)}/logs", {"task": task, "offset": offset}
        )
        size_header = headers.get("X-Berth-Log-Size")
        try:
            size = int(size_header) if size_header is not None else offset + len(data)
        except ValueError:
            size = offset + len(data)
        running = (headers.get("X-Berth-Task-Running") or "0").strip() == "1"
        return data, size, running

    def logs(
        self,
        id: int,
        task: int = 0,
        follow: bool = False,
        *,
        offset: int = 0,
        poll: float = 1.0,
        encoding: Optional[str] = "utf-8",
    ) -> Union[str, bytes, Iterator[Union[str, bytes]]]:
        """The output of task ``task`` of the job, from byte ``offset``.

        Without ``follow``, returns the log as it is now (a ``str``, or
        ``bytes`` with ``encoding=None``). With ``follow=True``, returns an
        iterator of chunks as they are written, which ends when the job has
        ended and its log is drained::

            for chunk in client.logs(job_id, follow=True):
                print(chunk, end="")

        While following, a job that has not started yet, a log the agent has
        not created yet and an unreachable node (503) are waited out; a job
        requeued onto a new attempt is read again from the start of the new
        log.

        Raises:
            NotFound: no such job (without follow: or no log for the task).
            Conflict: without follow, the job has not started yet.
            Forbidden: another user's job (logs are for the owner and admins).
            BadRequest: no such task.
        """
        if follow:
            self.get(id)  # fail now, not at the first next(), for a missing job
            return self._follow(id, task, offset, poll, encoding)
        data = b""
        while True:
            chunk, size, _ = self._log_chunk(id, task, offset + len(data))
            data += chunk
            if not chunk or offset + len(data) >= size:
                break
        return data if encoding is None else data.decode(encoding, "replace")

    def _follow(
        self, id: int, task: int, offset: int, poll: float, encoding: Optional[str]
    ) -> Iterator[Union[str, bytes]]:
        decoder = codecs.getincrementaldecoder(encoding)("replace") if encoding else None
        finished = False
        while True:
            try:
                chunk, size, running = self._log_chunk(id, task, offset)
            except (Conflict, NotFound, ServerError) as error:
                # Conflict: not started yet. NotFound from the server (JSON):
                # the agent has no log file yet. 503: the node is unreachable
                # for now. Wait for any of these; anything else is an error
                # (an empty 404 means the server has no logs route at all).
                transient = isinstance(error, Conflict) or (
                    isinstance(error, NotFound) and error.code is not None
                ) or error.status == 503
                if not transient:
                    raise
                chunk, size, running = b"", offset, False
            if size < offset:
                # The log is shorter than what was read: the job was requeued
                # and this is a new attempt's log. Read it from the start.
                offset = 0
                continue
            if chunk:
                offset += len(chunk)
                text = decoder.decode(chunk) if decoder else chunk
                if text:
                    yield text
            if offset < size:
                continue  # more is there already
            if finished:
                break  # ended before this read, and nothing is left
            if not running:
                # Ended, or not started yet. One more read after an end
                # drains what was written in between.
                finished = self.get(id).terminal
                if finished:
                    continue
            time.sleep(poll)
        if decoder:
            tail = decoder.decode(b"", final=True)
            if tail:
                yield tail

    # --- cluster ---

    def nodes(self) -> List[Dict[str, Any]]:
        """Every node: name, state, gpu_type, gpus (index, group, healthy, job), ..."""
        return self._json("GET", "/api/v1/nodes")["nodes"]

    def queues(self) -> List[Dict[str, Any]]:
        """Every queue: name, parent, guaranteed/ceiling/used GPUs, pending/running jobs."""
        return self._json("GET", "/api/v1/queues")["queues"]

    def usage(
        self,
        start: Union[None, int, float, datetime.datetime] = None,
        end: Union[None, int, float, datetime.datetime] = None,
    ) -> Dict[str, Any]:
        """GPU-hours by user and by queue between ``start`` and ``end`` (unix seconds
        or datetimes; default the last 30 days): ``{"from", "to", "by_user",
        "by_queue"}``."""
        return self._json("GET", "/api/v1/usage", {"from": _unix(start), "to": _unix(end)})

    def create_token(
        self,
        user: str,
        role: str = "user",
        node: Optional[str] = None,
        expires_in: Union[None, int, datetime.timedelta] = None,
    ) -> str:
        """Issues a token (admins only) and returns its secret. ``expires_in``
        (whole seconds or a timedelta): refused from then on; default never."""
        body: Dict[str, Any] = {"user": user, "role": role}
        if node is not None:
            body["node"] = node
        if expires_in is not None:
            body["expires_in_s"] = int(_seconds(expires_in))
        return self._json("POST", "/api/v1/tokens", body=body)["token"]

    def tokens(self) -> List[Dict[str, Any]]:
        """Every token for admins, a user's own for users: id, user, role, node,
        created, expires, expired, revoked (never the secret)."""
        return self._json("GET", "/api/v1/tokens")["tokens"]

    def revoke_token(self, id: str) -> None:
        """Revokes a token (its user's own, or any for admins): the server
        refuses it from the next request on."""
        self._json("DELETE", f"/api/v1/tokens/{urllib.parse.quote(id, safe='')}")

    def drain(self, node: str) -> None:
        """Stops placing jobs on ``node`` (admins only)."""
        self._json("POST", f"/api/v1/nodes/{urllib.parse.quote(node, safe='')}/drain", safe=True)

    def undrain(self, node: str) -> None:
        """Lets jobs be placed on ``node`` again (admins only)."""
        self._json("POST", f"/api/v1/nodes/{urllib.parse.quote(node, safe='')}/undrain", safe=True)

    def ready(self) -> bool:
        """Whether the server answers ``/readyz`` with ready (no token needed)."""
        try:
            status, _, _ = self._send("GET", "/readyz", auth=False)
            return status == 200
        except BerthError:
            return False
