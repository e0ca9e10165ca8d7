#!/usr/bin/env python3
"""Tests of the Berth Python client against a real `berth dev` server.

Starts `berth dev --nodes 0` on a loopback port chosen by the kernel, with a
temporary data dir, and drives it through berth.Client as an admin and two
users. With no nodes every job stays pending (or held), which is what the
round trips below need. Placement (issue 26) has a second `berth dev` with
one node of 2 GPUs and the feature ib. The logs route is tested against the
real server when it has one, and its follow logic against a small stub that speaks the
route's contract.

Usage: test_client.py [BERTH_BINARY] [unittest options]
       (or set BERTH_BINARY; default: build/berth at the repository root)
"""
import datetime
import http.server
import json
import os
import pwd
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # clients/python: the berth package

import berth  # noqa: E402

REPO = HERE.parents[2]
SERVER = None  # the DevServer of this module


class DevServer:
    """`berth dev` in a temporary data dir on 127.0.0.1, port picked by the kernel."""

    def __init__(self, binary, nodes=("--nodes", "0")):
        self.binary = binary
        self.nodes = list(nodes)
        self.tmp = tempfile.TemporaryDirectory(prefix="berth-pyclient-")
        self.data_dir = os.path.join(self.tmp.name, "data")
        self.log_path = os.path.join(self.tmp.name, "server.log")
        self.process = None
        self.addr = None

    def start(self):
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [self.binary, "dev", "--data-dir", self.data_dir,
                 "--listen", "127.0.0.1:0", *self.nodes],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"berth dev exited with {self.process.returncode}:\n{self.log()}")
            match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", self.log())
            if match:
                self.addr = match.group(1)
                probe = berth.Client(self.addr, token="unused", timeout=2)
                if probe.ready() and os.path.exists(self.admin_token_path()):
                    return
            time.sleep(0.05)
        raise RuntimeError(f"berth dev did not become ready in 60 s:\n{self.log()}")

    def admin_token_path(self):
        return os.path.join(self.data_dir, "admin-token")

    def admin_token(self):
        with open(self.admin_token_path()) as f:
            return f.read().strip()

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        try:
            if self.process is not None and self.process.poll() is None:
                os.kill(self.process.pid, signal.SIGTERM)  # only the process we started
                try:
                    self.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.kill(self.process.pid, signal.SIGKILL)
                    self.process.wait()
        finally:
            self.tmp.cleanup()


def binary_path():
    path = os.environ.get("BERTH_BINARY") or str(REPO / "build" / "berth")
    if not os.access(path, os.X_OK):
        raise RuntimeError(
            f"no berth binary at {path}: build it (cmake --build --preset default --target berth) "
            "or pass its path as the first argument / BERTH_BINARY")
    return path


def setUpModule():
    global SERVER
    SERVER = DevServer(binary_path())
    try:
        SERVER.start()
    except BaseException:
        SERVER.stop()
        raise


def tearDownModule():
    if SERVER is not None:
        SERVER.stop()


class ServerTest(unittest.TestCase):
    """Clients for an admin and two users of the module's server."""

    @classmethod
    def setUpClass(cls):
        cls.addr = SERVER.addr
        cls.admin = berth.Client(cls.addr, SERVER.admin_token(), timeout=10)
        cls.alice = berth.Client(cls.addr, cls.admin.create_token("alice"), timeout=10)
        cls.bob = berth.Client(cls.addr, cls.admin.create_token("bob"), timeout=10)


class JobRoundTrips(ServerTest):
    def test_submit_and_get(self):
        job_id = self.alice.submit(["python3", "-c", "print(1)"], gpus=2, tasks=2, name="train",
                                   env={"LR": "0.1"}, priority="high", time_limit_s=600,
                                   queue="research")
        self.assertIsInstance(job_id, int)
        job = self.alice.get(job_id)
        self.assertEqual(job.id, job_id)
        self.assertEqual(job.user, "alice")
        self.assertEqual(job.name, "train")
        self.assertEqual(job.state, "pending")
        self.assertFalse(job.terminal)
        self.assertEqual(job.gpus, 2)
        self.assertEqual(job.tasks, 2)
        self.assertEqual(job.priority, 100)
        self.assertEqual(job.queue, "research")
        self.assertEqual(job.time_limit_s, 600)
        self.assertEqual(job.command, ["python3", "-c", "print(1)"])
        self.assertEqual(job.env, {"LR": "0.1"})
        self.assertIsNotNone(job.submit_time)
        self.assertIsNotNone(job.submit_time.tzinfo)
        self.assertIsNone(job.start_time)
        self.assertEqual(job.raw["id"], job_id)

    def test_submit_string_command_script_and_fractions(self):
        # Issue 29: a string is a shell command line, run by sh -c; a list
        # is argv; the job runs in the caller's directory unless told.
        job = self.alice.get(self.alice.submit("python3 train.py --name 'a b' > out.txt"))
        self.assertEqual(job.command, ["sh", "-c", "python3 train.py --name 'a b' > out.txt"])
        self.assertEqual(job.workdir, os.getcwd())
        job = self.alice.get(self.alice.submit(["echo", "a b"], workdir="/tmp"))
        self.assertEqual((job.command, job.workdir), (["echo", "a b"], "/tmp"))
        self.assertEqual(job.gpus, 1)  # the default
        job = self.alice.get(self.alice.submit(script="#!/bin/sh\necho hi\n", gpus=0))
        self.assertEqual(job.script, "#!/bin/sh\necho hi\n")
        self.assertEqual(job.gpus, 0)
        job = self.alice.get(self.alice.submit(["true"], gpu_milli=250))
        self.assertEqual(job.gpu_milli, 250)
        self.assertIsNone(job.gpus)
        job = self.alice.get(self.alice.submit(["true"], output="%x-%j.out", error="%x.err",
                                               open_mode="append"))
        self.assertEqual((job.output, job.error, job.open_mode), ("%x-%j.out", "%x.err", "append"))

    def test_placement_fields_round_trip(self):
        # Issue 26. No node is registered: the server takes any job.
        job = self.alice.get(self.alice.submit(
            ["true"], gpu_type=["A100-80GB", "H100-80GB"], constraint="(a100|h100)&!spot",
            nodelist=("gpu[01-02]", "gpu07"), exclude="gpu02", wait_for_nodes=True))
        self.assertEqual(job.gpu_type, "A100-80GB|H100-80GB")
        self.assertEqual(job.gpu_types, ["A100-80GB", "H100-80GB"])
        self.assertEqual(job.constraint, "(a100|h100)&!spot")
        self.assertEqual(job.nodelist, ["gpu01", "gpu02", "gpu07"])
        self.assertEqual(job.exclude, ["gpu02"])
        self.assertTrue(job.wait_for_nodes)
        job = self.alice.get(self.alice.submit(["true"], gpu_type="A100-80GB|H100-80GB",
                                               nodelist=["gpu01"]))
        self.assertEqual(job.gpu_types, ["A100-80GB", "H100-80GB"])
        self.assertEqual(job.nodelist, ["gpu01"])
        self.assertEqual((job.constraint, job.exclude, job.wait_for_nodes), ("", [], False))
        job = self.alice.get(self.alice.submit(["true"]))
        self.assertEqual((job.gpu_type, job.gpu_types), ("", []))

    def test_container_round_trips_and_mounts_need_the_allow_list(self):
        # Issue 28. `berth dev` allows no host path: an image alone is fine.
        job = self.alice.get(self.alice.submit(
            ["true"], container={"image": "localhost/train:1", "env": {"A": "b"},
                                 "entrypoint": ["/bin/sh", "-c"], "pull": "never"}))
        self.assertEqual(job.container["image"], "localhost/train:1")
        self.assertEqual(job.container["env"], {"A": "b"})
        self.assertEqual(job.container["entrypoint"], ["/bin/sh", "-c"])
        self.assertEqual(job.container["pull"], "never")
        self.assertEqual(job.container["mounts"], [])
        self.assertEqual(self.bob.get(job.id).container, {"image": "localhost/train:1"})
        self.assertEqual(self.alice.get(self.alice.submit(["true"], container="img")).container
                         ["image"], "img")
        self.assertIsNone(self.alice.get(self.alice.submit(["true"])).container)
        with self.assertRaises(berth.BadRequest) as caught:
            self.alice.submit(["true"], container={"image": "img", "mounts": ["/etc:/etc:ro"]})
        self.assertIn("container.mounts[0].source", str(caught.exception))
        self.assertIn("/etc", str(caught.exception))

    def test_array_submit_returns_every_id(self):
        ids = self.alice.submit_ids(["true"], array="0-2", name="sweep")
        self.assertEqual(len(ids), 3)
        self.assertEqual([self.alice.get(i).array_index for i in ids], [0, 1, 2])
        self.assertEqual(self.alice.submit(["true"], array="0-1"), ids[-1] + 1)

    def test_others_see_the_job_but_not_its_private_fields(self):
        job_id = self.alice.submit(["secret-program"], env={"KEY": "v"})
        seen = self.bob.get(job_id)
        self.assertEqual(seen.user, "alice")
        self.assertIsNone(seen.command)
        self.assertIsNone(seen.env)

    def test_list_filters_and_paging(self):
        ids = [self.alice.submit(["true"], queue="paging") for _ in range(5)]
        held = self.bob.submit(["true"], queue="paging", hold=True)
        listed = self.alice.list(queue="paging", page_size=2)  # three pages and an empty one
        self.assertEqual([job.id for job in listed], ids + [held])
        self.assertEqual([j.id for j in self.alice.list(queue="paging", state="held")], [held])
        self.assertEqual([j.id for j in self.alice.list(queue="paging", user="bob")], [held])
        self.assertEqual([j.id for j in self.alice.list(queue="paging", user="nobody")], [])
        self.assertEqual([j.id for j in self.alice.list(queue="paging", live=True)], ids + [held])
        self.alice.cancel(ids[0])
        self.assertEqual([j.id for j in self.alice.list(queue="paging", live=True)], ids[1:] + [held])
        self.assertEqual([j.id for j in self.alice.list(queue="paging", state="cancelled")], ids[:1])
        with self.assertRaises(berth.BadRequest) as caught:
            self.alice.list(state="sleeping")
        self.assertIn("state", str(caught.exception))

    def test_hold_and_release(self):
        job_id = self.alice.submit(["true"], hold=True)
        self.assertEqual(self.alice.get(job_id).state, "held")
        explanation = self.alice.explain(job_id)
        self.assertEqual(explanation.reason, "held")
        self.assertEqual(explanation.job.id, job_id)
        with self.assertRaises(berth.Forbidden):
            self.bob.release(job_id)
        self.alice.release(job_id)
        self.assertEqual(self.alice.get(job_id).state, "pending")
        with self.assertRaises(berth.Conflict) as caught:
            self.alice.release(job_id)  # no longer held
        self.assertEqual(caught.exception.status, 409)
        self.assertIn("not held", str(caught.exception))

    def test_hold_and_update_a_waiting_job(self):
        # Issue 29: scontrol hold and update, through the client.
        job_id = self.alice.submit(["true"], hold=True, time_limit_s=600)
        self.alice.release(job_id)
        self.alice.hold(job_id)
        self.assertEqual(self.alice.get(job_id).state, "held")
        self.alice.hold(job_id)  # held already: nothing to do
        job = self.alice.update(job_id, time_limit_s=60)
        self.assertEqual((job.id, job.time_limit_s, job.state), (job_id, 60, "held"))
        with self.assertRaises(berth.Forbidden) as caught:
            self.alice.update(job_id, priority=5)
        self.assertIn("priority", str(caught.exception))
        with self.assertRaises(berth.BadRequest) as caught:
            self.alice.update(job_id, time_limit_s=0)
        self.assertIn("time_limit_s", str(caught.exception))
        with self.assertRaises(berth.Forbidden):
            self.bob.hold(job_id)
        self.alice.cancel(job_id)

    def test_explain_a_pending_job(self):
        job_id = self.alice.submit(["true"], gpus=1)
        deadline = time.monotonic() + 10
        explanation = self.alice.explain(job_id)
        while not explanation.reason and time.monotonic() < deadline:
            time.sleep(0.1)  # the scheduler has not looked at it yet
            explanation = self.alice.explain(job_id)
        self.assertEqual(explanation.job.id, job_id)
        self.assertEqual(explanation.job.state, "pending")
        self.assertEqual(explanation.reason, "infeasible")  # no node can ever hold it
        self.assertIsNone(explanation.eta)
        self.assertIsInstance(explanation.position, int)

    def test_cancel_then_wait_returns_the_cancelled_job(self):
        job_id = self.alice.submit(["sleep", "100"])
        self.alice.cancel(job_id)
        job = self.alice.wait(job_id, timeout=10, poll=0.1)
        self.assertEqual(job.id, job_id)
        self.assertEqual(job.state, "cancelled")
        self.assertTrue(job.terminal)
        self.assertIsNotNone(job.end_time)
        with self.assertRaises(berth.Conflict) as caught:
            self.alice.cancel(job_id)
        self.assertIn("already ended", caught.exception.message)

    def test_checkpoint_of_a_job_that_is_not_running_is_a_conflict(self):
        job_id = self.alice.submit(["sleep", "100"])
        with self.assertRaises(berth.Conflict) as caught:
            self.alice.checkpoint(job_id)
        self.assertIn("is not running (state pending)", caught.exception.message)
        with self.assertRaises(berth.Forbidden):
            self.bob.checkpoint(job_id)
        self.assertIsNone(self.alice.get(job_id).last_checkpoint)
        self.alice.cancel(job_id)

    def test_wait_times_out_on_a_pending_job(self):
        job_id = self.alice.submit(["true"])
        start = time.monotonic()
        with self.assertRaises(berth.WaitTimeout) as caught:
            self.alice.wait(job_id, timeout=0.5, poll=0.1)
        self.assertLess(time.monotonic() - start, 5)
        self.assertEqual(caught.exception.job.state, "pending")
        self.assertIsInstance(caught.exception, TimeoutError)

    def test_admin_cancels_anyones_job(self):
        job_id = self.bob.submit(["true"])
        self.admin.cancel(job_id)
        self.assertEqual(self.bob.get(job_id).state, "cancelled")


class Errors(ServerTest):
    def test_unknown_field_is_a_bad_request_naming_it(self):
        with self.assertRaises(berth.BadRequest) as caught:
            self.alice.submit(["true"], gpuz=1)
        error = caught.exception
        self.assertEqual(error.status, 400)
        self.assertEqual(error.code, "invalid_argument")
        self.assertEqual(error.field, "gpuz")
        self.assertIn("gpuz", str(error))
        self.assertIsInstance(error, berth.BerthError)

    def test_bad_value_names_the_field(self):
        with self.assertRaises(berth.BadRequest) as caught:
            self.alice.submit(["true"], tasks=0)
        self.assertEqual(caught.exception.field, "tasks")
        self.assertTrue(caught.exception.message.startswith("tasks: "), caught.exception.message)
        with self.assertRaises(berth.BadRequest) as caught:
            self.alice.submit(["true"], env={"CUDA_VISIBLE_DEVICES": "0"})
        self.assertEqual(caught.exception.field, "env")
        with self.assertRaises(berth.BadRequest) as caught:
            self.alice.submit()  # neither command nor script
        self.assertEqual(caught.exception.field, "command")

    def test_bad_placement_values_name_the_field(self):
        with self.assertRaises(berth.BadRequest) as caught:
            self.alice.submit(["true"], constraint="ib&")
        self.assertEqual(caught.exception.field, "constraint")
        self.assertIn("position 4", caught.exception.message)
        with self.assertRaises(berth.BadRequest) as caught:
            self.alice.submit(["true"], exclude="gpu[01-")
        self.assertEqual(caught.exception.field, "exclude")
        with self.assertRaises(berth.BadRequest) as caught:
            self.alice.submit(["true"], gpu_type=["", "A100-80GB"])
        self.assertEqual(caught.exception.field, "gpu_type")

    def test_wrong_token_is_unauthorized(self):
        client = berth.Client(self.addr, token="not-a-token", timeout=10)
        with self.assertRaises(berth.Unauthorized) as caught:
            client.list()
        self.assertEqual(caught.exception.status, 401)
        self.assertTrue(caught.exception.message)

    def test_cancelling_another_users_job_is_forbidden(self):
        job_id = self.alice.submit(["true"])
        with self.assertRaises(berth.Forbidden) as caught:
            self.bob.cancel(job_id)
        self.assertEqual(caught.exception.status, 403)
        self.assertIn("alice", caught.exception.message)
        self.assertEqual(self.alice.get(job_id).state, "pending")

    def test_admin_routes_are_forbidden_to_users(self):
        with self.assertRaises(berth.Forbidden):
            self.alice.create_token("mallory")

    def test_tokens_are_listed_to_their_user_and_revoked_at_once(self):
        secret = self.admin.create_token("erin", expires_in=datetime.timedelta(days=1))
        erin = berth.Client(self.addr, secret, timeout=10)
        mine = erin.tokens()
        self.assertEqual([t["user"] for t in mine], ["erin"])
        self.assertTrue(mine[0]["expires"])
        self.assertNotIn("token", mine[0])
        self.assertIn(mine[0]["id"], [t["id"] for t in self.admin.tokens()])
        with self.assertRaises(berth.Forbidden):
            self.bob.revoke_token(mine[0]["id"])
        erin.revoke_token(mine[0]["id"])
        with self.assertRaises(berth.Unauthorized):
            erin.tokens()
        with self.assertRaises(berth.BadRequest) as caught:
            self.admin.create_token("erin", expires_in=0)
        self.assertEqual(caught.exception.field, "expires_in_s")

    def test_missing_job_is_not_found(self):
        missing = 10**9
        for call in (self.alice.get, self.alice.cancel, self.alice.release, self.alice.explain):
            with self.subTest(call=call.__name__):
                with self.assertRaises(berth.NotFound) as caught:
                    call(missing)
                self.assertEqual(caught.exception.status, 404)
                self.assertIn(str(missing), caught.exception.message)

    def test_unreachable_server_is_connection_failed(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        client = berth.Client(f"127.0.0.1:{port}", token="t", timeout=2)
        self.assertEqual(client.addr, f"http://127.0.0.1:{port}")
        with self.assertRaises(berth.ConnectionFailed):
            client.get(1)
        self.assertFalse(client.ready())


class Cluster(ServerTest):
    def test_nodes_queues_usage(self):
        self.assertEqual(self.alice.nodes(), [])  # --nodes 0
        self.assertIsInstance(self.alice.queues(), list)
        usage = self.alice.usage()
        self.assertIsInstance(usage["by_user"], list)
        self.assertIsInstance(usage["by_queue"], list)
        self.assertLess(usage["from"], usage["to"])
        usage = self.alice.usage(start=1_000_000, end=2_000_000)
        self.assertEqual((usage["from"], usage["to"]), (1_000_000, 2_000_000))
        with self.assertRaises(berth.BadRequest):
            self.alice.usage(start=2_000_000, end=1_000_000)


class Placement(unittest.TestCase):
    """Issue 26, on a second `berth dev` with one node of 2 GPUs and the feature ib."""

    @classmethod
    def setUpClass(cls):
        cls.server = DevServer(binary_path(), ("--nodes", "1", "--fake-gpus", "2xH100-80GB",
                                               "--feature", "ib",
                                               "--agent-heartbeat-interval", "200ms"))
        try:
            cls.server.start()
            cls.client = berth.Client(cls.server.addr, cls.server.admin_token(), timeout=10)
            deadline = time.monotonic() + 30
            while not [n for n in cls.client.nodes() if n.get("state") == "up"]:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no node came up in 30 s:\n{cls.server.log()}")
                time.sleep(0.1)
        except BaseException:
            cls.server.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_nodes_show_their_features(self):
        (node,) = self.client.nodes()
        self.assertEqual(node["features"], ["ib"])

    def test_a_constraint_the_node_meets_runs_there(self):
        job = self.client.wait(self.client.submit(["true"], constraint="ib&!spot",
                                                  gpu_type=["A100-80GB", "H100-80GB"]),
                               timeout=30, poll=0.1)
        self.assertEqual(job.state, "succeeded")
        self.assertEqual(job.placement[0]["node"], "node-1")

    def test_a_job_no_node_could_ever_host_is_a_bad_request(self):
        with self.assertRaises(berth.BadRequest) as caught:
            self.client.submit(["true"], gpus=8)
        error = caught.exception
        self.assertEqual((error.status, error.field), (400, "gpus"))
        self.assertTrue(error.message.startswith(
            "gpus: 8 per task, but the largest node has 2; ask --nodes 4 --gpus 2"), error.message)
        with self.assertRaises(berth.BadRequest) as caught:
            self.client.submit(["true"], constraint="infiniband")
        self.assertEqual(caught.exception.field, "constraint")
        self.assertIn("1 does not match its constraint 'infiniband'", caught.exception.message)
        with self.assertRaises(berth.BadRequest) as caught:
            self.client.submit(["true"], exclude=["node-1"])
        self.assertEqual(caught.exception.field, "exclude")

    def test_wait_for_nodes_queues_it_and_explain_tallies_the_nodes(self):
        job_id = self.client.submit(["true"], constraint="infiniband", wait_for_nodes=True)
        deadline = time.monotonic() + 10
        explanation = self.client.explain(job_id)
        while explanation.nodes is None and time.monotonic() < deadline:
            time.sleep(0.1)  # the scheduler has not looked at it yet
            explanation = self.client.explain(job_id)
        self.assertEqual(explanation.reason, "infeasible")
        self.assertEqual(explanation.nodes, {"total": 1, "fit": 0, "rejected": {"features": 1}})
        self.assertIn("0 of 1 nodes could ever host it", explanation.message)
        self.client.cancel(job_id)


class Defaults(ServerTest):
    """Address and token come from arguments, the environment, then the dev cluster's files."""

    def setUp(self):
        self.cwd = os.getcwd()
        self.tmp = tempfile.TemporaryDirectory()
        os.chdir(self.tmp.name)
        env = {k: v for k, v in os.environ.items()
               if k not in ("BERTH_ADDR", "BERTH_TOKEN", "BERTH_CONFIG", "XDG_CONFIG_HOME")}
        # A home of its own: no config file or dev cluster of the caller's.
        env["HOME"] = self.tmp.name
        self.env = mock.patch.dict(os.environ, env, clear=True)
        self.env.start()

    def tearDown(self):
        self.env.stop()
        os.chdir(self.cwd)
        self.tmp.cleanup()

    def test_dev_token_file_in_the_current_directory(self):
        os.environ["BERTH_ADDR"] = self.addr
        os.makedirs(".berth-dev")
        with open(os.path.join(".berth-dev", "admin-token"), "w") as f:
            f.write(SERVER.admin_token() + "\n")
        client = berth.Client()
        self.assertEqual(client.addr, self.addr)
        # berth dev's admin is named after the Unix user who started it.
        self.assertEqual(client.get(client.submit(["true"])).user, pwd.getpwuid(os.geteuid()).pw_name)
        # BERTH_TOKEN wins over the file, and an argument over both.
        os.environ["BERTH_TOKEN"] = self.admin.create_token("carol")
        self.assertEqual(berth.Client().get(berth.Client().submit(["true"])).user, "carol")
        dave = self.admin.create_token("dave")
        client = berth.Client(token=dave)
        self.assertEqual(client.get(client.submit(["true"])).user, "dave")

    def write(self, path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def test_the_dev_cluster_berth_dev_announced(self):
        # Issue 29: what `berth dev` writes in ~/.config/berth/dev.toml, as
        # the CLI reads it, from any directory.
        token_file = os.path.join(self.tmp.name, "admin-token")
        self.write(token_file, SERVER.admin_token() + "\n")
        self.write(os.path.join(self.tmp.name, ".config/berth/dev.toml"),
                   f'server = "{self.addr}"\ntoken_file = "{token_file}"\n')
        client = berth.Client()
        self.assertEqual(client.addr, self.addr)
        self.assertEqual(client.get(client.submit(["true"])).user,
                         pwd.getpwuid(os.geteuid()).pw_name)
        # A token given alone goes to the dev cluster's server.
        gina = berth.Client(token=self.admin.create_token("gina"))
        self.assertEqual(gina.addr, self.addr)
        self.assertEqual(gina.get(gina.submit(["true"])).user, "gina")

    def test_the_cli_config_file(self):
        # The config file wins over the dev cluster; $BERTH_CONFIG names another.
        self.write(os.path.join(self.tmp.name, ".config/berth/dev.toml"),
                   'server = "http://127.0.0.1:1"\ntoken = "dev"\n')
        frank = self.admin.create_token("frank")
        self.write(os.path.join(self.tmp.name, ".config/berth/config.toml"),
                   f'server = ["{self.addr}"]\ntoken = "{frank}"\n')
        client = berth.Client()
        self.assertEqual(client.get(client.submit(["true"])).user, "frank")
        other = os.path.join(self.tmp.name, "other.toml")
        self.write(other, f'server = "{self.addr}"\nnot_a_key = 1\n')
        os.environ["BERTH_CONFIG"] = other
        with self.assertRaises(berth.BerthError) as caught:
            berth.Client()
        self.assertIn("not_a_key", str(caught.exception))

    def test_default_address_and_missing_token(self):
        os.environ["BERTH_TOKEN"] = "t"
        self.assertEqual(berth.Client().addr, "http://127.0.0.1:8080")
        del os.environ["BERTH_TOKEN"]
        with self.assertRaises(berth.BerthError) as caught:
            berth.Client(self.addr)
        self.assertIn("BERTH_TOKEN", str(caught.exception))


class RealLogs(ServerTest):
    """The logs route of the real server (no node runs anything: logs of unstarted jobs)."""

    def setUp(self):
        self.job_id = self.alice.submit(["echo", "hi"])
        try:
            self.alice.logs(self.job_id)
        except berth.NotFound as error:
            if error.code is None:  # not the server's JSON error: no such route
                self.skipTest("this server build has no GET /api/v1/jobs/{id}/logs route")
        except berth.BerthError:
            pass

    def test_a_job_that_has_not_started_has_no_logs_yet(self):
        with self.assertRaises(berth.Conflict) as caught:
            self.alice.logs(self.job_id)
        self.assertIn("not started", caught.exception.message)
        with self.assertRaises(berth.Forbidden):
            self.bob.logs(self.job_id)  # logs are for the owner and admins
        with self.assertRaises(berth.NotFound):
            self.alice.logs(10**9)

    def test_follow_of_a_job_cancelled_before_it_ran_ends_empty(self):
        self.alice.cancel(self.job_id)
        start = time.monotonic()
        chunks = list(self.alice.logs(self.job_id, follow=True, poll=0.1))
        self.assertLess(time.monotonic() - start, 10)
        self.assertEqual("".join(chunks), "")
        with self.assertRaises(berth.NotFound):
            self.alice.logs(10**9, follow=True)

    def test_follow_waits_for_a_job_to_start(self):
        follower = self.alice.logs(self.job_id, follow=True, poll=0.05)
        results = []
        thread = threading.Thread(target=lambda: results.append("".join(follower)))
        thread.start()
        time.sleep(0.5)
        self.assertTrue(thread.is_alive())  # pending: the follower waits
        self.alice.cancel(self.job_id)
        thread.join(timeout=10)
        self.assertFalse(thread.is_alive())
        self.assertEqual(results, [""])


# --- the logs contract, against a stub server ---

class StubApi(http.server.BaseHTTPRequestHandler):
    """Speaks the logs route's contract for job 7 (and sleeps for job 8).

    Job 7's task 0 writes its log in pieces, one per logs request, while it
    runs; the task then stops running and, as the job is seen succeeded, a
    last piece lands (a late flush) that a follower must still read.
    """

    pieces = []
    job5 = ["abc"]
    written = b""
    state = "running"
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type="application/json", headers=()):
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for key, value in headers:
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        cls = StubApi
        if self.headers.get("Authorization") != "Bearer stub":
            return self.reply(401, b'{"error":{"code":"unauthenticated","message":"token: no"}}')
        if url.path == "/api/v1/jobs/8":
            time.sleep(2)
            return self.reply(200, b'{"id": 8}')
        with cls.lock:
            if url.path == "/api/v1/jobs/5":
                state = "succeeded" if cls.job5 == ["abc"] else "pending"
                return self.reply(200, json.dumps({"id": 5, "state": state}).encode())
            if url.path == "/api/v1/jobs/5/logs":
                step = cls.job5.pop(0) if len(cls.job5) > 1 else cls.job5[0]
                errors = {"409": b'{"error":{"code":"failed_precondition","message":"not started"}}',
                          "503": b'{"error":{"code":"unavailable","message":"node down"}}',
                          "404": b'{"error":{"code":"not_found","message":"no log yet"}}'}
                if step in errors:
                    return self.reply(int(step), errors[step])
                return self.reply(200, b"abc", "text/plain",
                                  [("X-Berth-Log-Size", "3"), ("X-Berth-Task-Running", "0")])
            if url.path == "/api/v1/jobs/7":
                if len(cls.pieces) == 1 and cls.state == "running":
                    cls.state = "succeeded"
                    cls.written += cls.pieces.pop()  # the late flush
                return self.reply(200, json.dumps({"id": 7, "state": cls.state}).encode())
            if url.path == "/api/v1/jobs/7/logs":
                if query.get("task") != "0":
                    return self.reply(404, b'{"error":{"code":"not_found","message":"job 7 has no task 1"}}')
                offset = int(query.get("offset", "0"))
                if len(cls.pieces) > 1:
                    cls.written += cls.pieces.pop(0)
                running = "1" if len(cls.pieces) > 1 else "0"
                body = cls.written[offset:offset + 4]  # small reads: the client must loop
                return self.reply(200, body, "text/plain",
                                  [("X-Berth-Log-Size", str(len(cls.written))),
                                   ("X-Berth-Task-Running", running)])
            if url.path.startswith("/api/v1/jobs/"):
                return self.reply(404, b'{"error":{"code":"not_found","message":"job: not found"}}')
        return self.reply(404, b"")  # no such route: empty body, like cpp-httplib


class LogsContract(unittest.TestCase):
    """logs() and logs(follow=True) against the route's contract (stub server)."""

    TEXT = "step 1 loss 0.9\nstep 2 λ=0.1\nstep 3 done ✓\nflushed at exit\n"

    @classmethod
    def setUpClass(cls):
        cls.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StubApi)
        cls.httpd.daemon_threads = True
        cls.thread = threading.Thread(target=cls.httpd.serve_forever, daemon=True)
        cls.thread.start()
        cls.client = berth.Client(f"http://127.0.0.1:{cls.httpd.server_port}", "stub", timeout=5)

    @classmethod
    def tearDownClass(cls):
        cls.httpd.shutdown()
        cls.httpd.server_close()

    def setUp(self):
        data = self.TEXT.encode()
        # Pieces that cut multi-byte characters in two; the last is the late flush.
        cuts = [0, 7, 25, 26, 41, data.index(b"flushed"), len(data)]
        with StubApi.lock:
            StubApi.pieces = [data[a:b] for a, b in zip(cuts, cuts[1:])]
            StubApi.written = b""
            StubApi.state = "running"

    def test_follow_reads_everything_until_the_job_ends(self):
        chunks = list(self.client.logs(7, follow=True, poll=0.01))
        self.assertEqual("".join(chunks), self.TEXT)
        self.assertEqual(StubApi.state, "succeeded")

    def test_follow_bytes_from_an_offset(self):
        chunks = list(self.client.logs(7, follow=True, poll=0.01, offset=5, encoding=None))
        self.assertEqual(b"".join(chunks), self.TEXT.encode()[5:])

    def test_snapshot_reads_what_is_there(self):
        with StubApi.lock:
            StubApi.written, StubApi.pieces, StubApi.state = self.TEXT.encode(), [], "succeeded"
        self.assertEqual(self.client.logs(7), self.TEXT)  # in many small reads
        rest = self.client.logs(7, encoding=None, offset=10)
        self.assertEqual(rest, self.TEXT.encode()[10:])

    def test_follow_waits_out_not_started_and_node_down(self):
        with StubApi.lock:
            StubApi.job5 = ["409", "503", "404", "abc"]
        chunks = list(self.client.logs(5, follow=True, poll=0.01))
        self.assertEqual(chunks, ["abc"])
        with StubApi.lock:
            StubApi.job5 = ["409"]
        with self.assertRaises(berth.Conflict):
            self.client.logs(5)

    def test_errors(self):
        with self.assertRaises(berth.NotFound) as caught:
            self.client.logs(7, task=1)
        self.assertEqual(caught.exception.message, "job 7 has no task 1")
        with self.assertRaises(berth.NotFound):
            self.client.logs(9, follow=True)
        with self.assertRaises(berth.NotFound) as caught:
            self.client._send("GET", "/no/such/route")
        self.assertIsNone(caught.exception.code)
        self.assertIn("/no/such/route", caught.exception.message)
        with self.assertRaises(berth.Unauthorized):
            berth.Client(self.client.addr, "wrong", timeout=5).logs(7)

    def test_every_request_has_a_timeout(self):
        client = berth.Client(self.client.addr, "stub", timeout=0.3)
        start = time.monotonic()
        with self.assertRaises(berth.ConnectionFailed) as caught:
            client.get(8)
        self.assertLess(time.monotonic() - start, 1.5)
        self.assertIn("0.3 s", str(caught.exception))


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        os.environ["BERTH_BINARY"] = sys.argv.pop(1)
    unittest.main(verbosity=2)
