"""Python client of Berth, the GPU job scheduler (standard library only).

    import berth
    client = berth.Client()                  # $BERTH_ADDR / $BERTH_TOKEN, else the dev cluster
    job_id = client.submit(["python3", "train.py"], gpus=2, name="train")
    print(client.explain(job_id).message)
    print(client.wait(job_id).state)
"""
from .client import DEFAULT_ADDR, DEV_TOKEN_FILE, Client
from .errors import (
    BadRequest,
    BerthError,
    Conflict,
    ConnectionFailed,
    Forbidden,
    NotFound,
    ServerError,
    Unauthorized,
    WaitTimeout,
)
from .models import TERMINAL_STATES, Explanation, Job

__version__ = "0.1.0"

__all__ = [
    "Client",
    "Job",
    "Explanation",
    "TERMINAL_STATES",
    "DEFAULT_ADDR",
    "DEV_TOKEN_FILE",
    "BerthError",
    "BadRequest",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "Conflict",
    "ServerError",
    "ConnectionFailed",
    "WaitTimeout",
]
