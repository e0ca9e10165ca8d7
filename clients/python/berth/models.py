"""What the client returns: jobs and explanations as dataclasses.

Each object keeps the server's JSON in ``raw``, so a field the server adds
later is readable before this module learns about it. Times are timezone-aware
``datetime`` objects in UTC (the server writes RFC 3339), or None.
"""
from __future__ import annotations

import dataclasses
import datetime
import re
from typing import Any, Dict, List, Optional

__all__ = ["Job", "Explanation", "TERMINAL_STATES", "parse_time"]

#: The states no job leaves (the server's words; ``lost`` is not one: a lost
#: job is requeued or failed).
TERMINAL_STATES = frozenset({"succeeded", "failed", "cancelled", "timeout"})


def parse_time(text: Optional[str]) -> Optional[datetime.datetime]:
    """An RFC 3339 time as the server writes it (``2026-12-01T03:17:46.610Z``)."""
    if not text:
        return None
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    # Older Pythons read only 3 or 6 fraction digits: pad or cut to 6.
    text = re.sub(r"\.(\d+)", lambda m: "." + (m.group(1) + "000000")[:6], text, count=1)
    try:
        return datetime.datetime.fromisoformat(text)
    except ValueError:
        return None  # unreadable; the text stays in the object's ``raw``


@dataclasses.dataclass
class Job:
    """One job as ``GET /api/v1/jobs/{id}`` answers it.

    ``command``, ``script``, ``env`` and ``workdir`` are None for other users'
    jobs (the server shows them only to the owner and admins). ``gpus`` is the
    whole GPUs per task, None for a fractional request (see ``gpu_milli``).
    ``gpu_type`` is the accepted models joined with ``|`` (``gpu_types``: as
    a list); ``nodelist`` and ``exclude`` are the expanded node names.
    """

    id: int
    user: str = ""
    name: str = ""
    state: str = ""
    reason: str = ""
    message: str = ""
    queue: str = ""
    priority: int = 0
    tasks: int = 1
    gpus: Optional[int] = None
    gpu_milli: int = 0
    gpu_type: str = ""
    constraint: str = ""
    nodelist: List[str] = dataclasses.field(default_factory=list)
    exclude: List[str] = dataclasses.field(default_factory=list)
    wait_for_nodes: bool = False
    gpus_in_one_group: bool = False
    cpu_milli: int = 0
    memory_mib: int = 0
    preemptible: bool = False
    grace_s: float = 0.0
    retries: int = 0
    time_limit_s: Optional[float] = None
    estimate_s: Optional[float] = None
    depends_on: List[str] = dataclasses.field(default_factory=list)
    submit_time: Optional[datetime.datetime] = None
    start_time: Optional[datetime.datetime] = None
    end_time: Optional[datetime.datetime] = None
    placement: List[Dict[str, Any]] = dataclasses.field(default_factory=list)
    attempts: int = 0
    preemptions: int = 0
    last_checkpoint: Optional[datetime.datetime] = None
    exit_code: Optional[int] = None
    signal: Optional[int] = None
    array_parent: Optional[int] = None
    array_index: Optional[int] = None
    command: Optional[List[str]] = None
    script: Optional[str] = None
    env: Optional[Dict[str, str]] = None
    workdir: Optional[str] = None
    output: Optional[str] = None
    error: Optional[str] = None
    open_mode: Optional[str] = None
    # The image and what it sees of the node (others see only the image);
    # None: the job runs on the host.
    container: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @property
    def gpu_types(self) -> List[str]:
        """The GPU models the job accepts (any one of them); empty for any model."""
        return [model for model in self.gpu_type.split("|") if model]

    @property
    def terminal(self) -> bool:
        """Whether the job has ended (succeeded, failed, cancelled or timeout)."""
        return self.state in TERMINAL_STATES

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Job":
        """Builds a Job from the server's JSON; unknown keys stay in ``raw``."""
        values: Dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            if field.name == "raw" or field.name not in data:
                continue
            value = data[field.name]
            if field.name.endswith("_time") or field.name == "last_checkpoint":
                value = parse_time(value)
            values[field.name] = value
        return cls(raw=data, **values)


@dataclasses.dataclass
class Explanation:
    """Why a job is where it is: ``GET /api/v1/jobs/{id}/explain``.

    ``reason`` is a stable word (``held``, ``infeasible``, ``dependency``,
    ...), ``message`` the human sentence, ``position`` the job's place in the
    queue (0 = next), ``blocker`` the job it waits for, ``eta`` when it is
    expected to start; each None when the server does not know. ``nodes`` is
    the node tally of a pending job: ``{"total": 3, "fit": 0, "rejected":
    {"gpus": 2, "features": 1}}`` (nodes by the reason they cannot take it;
    ``fit`` of them can), or None.
    """

    job: Job
    reason: str = ""
    message: str = ""
    position: Optional[int] = None
    blocker: Optional[int] = None
    eta: Optional[datetime.datetime] = None
    nodes: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Explanation":
        """Builds an Explanation from the server's JSON."""
        return cls(
            job=Job.from_json(data.get("job") or {"id": 0}),
            reason=data.get("reason") or "",
            message=data.get("message") or "",
            position=data.get("position"),
            blocker=data.get("blocker"),
            eta=parse_time(data.get("eta")),
            nodes=data.get("nodes"),
            raw=data,
        )
