#!/usr/bin/env python3
"""Issue 27, item 1: `berth dev` started by an ordinary Unix user works end
to end, and its jobs run as that user.

As root (CI), the test makes its own account (berth-test-dev) and runs
everything as it, from a home of its own: `berth dev` with one agent, then
the CLI with nothing configured (it finds the dev cluster as a newcomer's
would). It checks that the bootstrap admin is named after the user, that
a job runs with the user's uid and passwd entry and writes files of the
user's, and that `berth logs` shows its output. Without root it cannot make
an account and reports a skip (77).

Every process is started here and stopped by its PID; loopback only.

Usage: dev_as_user_test.py BERTH_BINARY
"""
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import Checks, Process, free_port, wait_until  # noqa: E402

USER = "berth-test-dev"
check = Checks()


def account():
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", USER],
                       capture_output=True)
        return pwd.getpwnam(USER)


def main():
    if os.geteuid() != 0:
        print("skip: needs root to make a Unix account")
        return 77
    binary = os.path.abspath(sys.argv[1])
    user = account()
    with tempfile.TemporaryDirectory() as root:
        # The build may sit where the user cannot reach it (root's home):
        # the binaries berth dev runs, in a directory of the user's.
        os.chmod(root, 0o755)
        home = os.path.join(root, "home")
        bin_dir = os.path.join(root, "bin")
        os.makedirs(os.path.join(home, "work"))
        os.makedirs(bin_dir)
        for name in ("berth", "berthd", "berth-supervisor"):
            source = os.path.join(os.path.dirname(binary), name)
            if os.path.exists(source):
                shutil.copy2(source, bin_dir)
        for path in (home, os.path.join(home, "work")):
            os.chown(path, user.pw_uid, user.pw_gid)
        env = {"HOME": home, "PATH": "/usr/bin:/bin", "USER": USER, "LOGNAME": USER,
               "NO_COLOR": "1"}
        work = os.path.join(home, "work")
        data = os.path.join(work, ".berth-dev")

        def as_user(*args, timeout=60):
            return subprocess.run([os.path.join(bin_dir, "berth"), *args], cwd=work, env=env,
                                  user=user.pw_uid, group=user.pw_gid, extra_groups=[],
                                  capture_output=True, text=True, timeout=timeout)

        port = free_port()
        argv = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups",
                "--", os.path.join(bin_dir, "berth"), "dev", "--data-dir", data, "--listen",
                f"127.0.0.1:{port}", "--nodes", "1", "--fake-gpus", "2xA100"]
        dev = Process(argv, os.path.join(root, "dev.log"), env=env)
        dev.start().wait_http(f"http://127.0.0.1:{port}/readyz")
        try:
            check(os.stat(data).st_uid == user.pw_uid, "the dev data dir is the user's")
            tokens = as_user("token", "list", "--json")
            check(tokens.returncode == 0, f"token list: {tokens.stderr!r}")
            listed = json.loads(tokens.stdout or "[]")
            check([t["user"] for t in listed if t["role"] == "admin"] == [USER],
                  f"the bootstrap admin is named after the Unix user: {listed}")

            probe = ("id -un; id -u; echo \"$HOME $USER\"; touch \"$HOME/proof\"; "
                     "stat -c %U \"$HOME/proof\"")
            done = as_user("submit", "--wait", "--", "sh", "-c", probe, timeout=120)
            check(done.returncode == 0, f"the job succeeds: {done.returncode} {done.stderr!r}")
            job = done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""
            shown = json.loads(as_user("show", job, "--json").stdout or "{}")
            check(shown.get("user") == USER and shown.get("state") == "succeeded",
                  f"the job is the user's and succeeded: {shown}")
            logs = as_user("logs", job).stdout.split("\n")
            # HOME from the passwd entry, as on a real node, not the caller's.
            check(logs[:4] == [USER, str(user.pw_uid), f"{user.pw_dir} {USER}", USER],
                  f"it ran as the user, with the user's HOME: {logs}")
            proof = os.path.join(user.pw_dir, "proof")
            check(os.path.exists(proof) and os.stat(proof).st_uid == user.pw_uid,
                  "the file it wrote is the user's")
            if os.path.exists(proof):
                os.remove(proof)
        finally:
            dev.stop()
    if check.failures:
        print("FAILED:\n  " + "\n  ".join(check.failures))
        return 1
    print("ok: berth dev as an ordinary user runs its jobs as that user")
    return 0


if __name__ == "__main__":
    sys.exit(main())
