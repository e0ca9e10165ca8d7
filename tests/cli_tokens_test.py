#!/usr/bin/env python3
"""Issue 27, item 5: `berth token create | list | revoke` against a real
`berth dev` (no nodes: tokens need none).

  - `token create --expires-in 30d` issues a token whose listing shows an
    expiry; a bad --expires-in exits 2 naming the flag, before any request;
  - `token list` shows an admin every token and a user only their own, never
    a secret; `--json` is the server's list;
  - a user cannot revoke another's token (exit 1); `token revoke ID` makes
    the token fail on its very next use (exit 1, 401), also the caller's own.

Every process is started here and stopped by its PID; loopback only.

Usage: cli_tokens_test.py BERTH_BINARY
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import Checks, CliSandbox, berth_dev, free_port  # noqa: E402

check = Checks()
failures = check.failures


def main():
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as root:
        berth = CliSandbox(binary, root)
        data = os.path.join(root, "data")
        os.makedirs(data)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        dev = berth_dev(binary, data, port, "--nodes", "0", env=berth.env)
        try:
            dev.start().wait_http(f"{url}/readyz")
            with open(os.path.join(data, "admin-token")) as f:
                admin = ("--server", url, "--token", f.read().strip())

            def create(user, *extra):
                made = berth("token", "create", "--user", user, "--json", *extra, *admin)
                check(made.returncode == 0, f"token create {user}: {made.stderr!r}")
                return json.loads(made.stdout)

            alice = create("alice", "--expires-in", "30d")
            bob = create("bob")
            check(alice["expires"] is not None and bob["expires"] is None,
                  f"--expires-in sets an expiry: {alice} {bob}")
            as_alice = ("--server", url, "--token", alice["token"])
            as_bob = ("--server", url, "--token", bob["token"])

            bad = berth("token", "create", "--user", "carol", "--expires-in", "soon", *admin)
            check(bad.returncode == 2 and "--expires-in" in bad.stderr,
                  f"bad --expires-in: {bad.returncode} {bad.stderr!r}")

            table = berth("token", "list", *admin)
            check(table.returncode == 0 and all(t["id"] in table.stdout for t in (alice, bob))
                  and "never" in table.stdout and "active" in table.stdout
                  and alice["token"] not in table.stdout,
                  f"token list as admin: {table.returncode} {table.stdout!r} {table.stderr!r}")
            mine = json.loads(berth("token", "list", "--json", *as_alice).stdout)
            check([t["id"] for t in mine] == [alice["id"]]
                  and not any("hash" in t or "token" in t for t in mine),
                  f"token list --json as alice: only hers, no secret: {mine}")

            theirs = berth("token", "revoke", alice["id"], *as_bob)
            check(theirs.returncode == 1 and alice["id"] in theirs.stderr,
                  f"bob revokes alice's token: {theirs.returncode} {theirs.stderr!r}")
            check(berth("queue", *as_alice).returncode == 0, "alice's token still works")

            revoked = berth("token", "revoke", bob["id"], *admin)
            check(revoked.returncode == 0, f"admin revokes bob's: {revoked.stderr!r}")
            refused = berth("queue", *as_bob)
            check(refused.returncode == 1 and "revoked" in refused.stderr,
                  f"bob's token is refused at once: {refused.returncode} {refused.stderr!r}")
            states = {t["id"]: t["revoked"]
                      for t in json.loads(berth("token", "list", "--json", *admin).stdout)}
            check(states.get(bob["id"]) is True and states.get(alice["id"]) is False,
                  f"the listing says which is revoked: {states}")

            check(berth("token", "revoke", alice["id"], *as_alice).returncode == 0,
                  "alice revokes her own token")
            check(berth("token", "list", *as_alice).returncode == 1,
                  "alice's token is refused after she revoked it")
        finally:
            dev.stop()
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("ok: berth token create, list and revoke")


if __name__ == "__main__":
    main()
