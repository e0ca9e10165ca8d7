#!/usr/bin/env python3
"""Issue 26: where a job runs, from the CLI against a real `berth dev`.

Starts `berth dev --nodes 3 --fake-gpus 2xH100-80GB --feature nvlink
--feature ib@node-2,spot@node-3` with HOME and the working directory in a
temporary directory, then runs the real `berth` commands:

  - `berth dev --feature` refuses a bad name and a node it does not have;
  - `berth nodes` shows each node's features;
  - -C, -w, -x, a #SBATCH --constraint= script and a #BERTH -C line that a
    flag overrides each put a job on the node they name (three different
    nodes, so no single default placement passes);
  - --gpu-type 'A|B' is accepted and shown as the set;
  - a job no node could ever host is refused: the server's message, exit 2,
    nothing on stdout; with --wait-for-nodes it is queued and `berth why`
    gives the node tally a line of its own;
  - a constraint the CLI can tell is malformed exits 2 naming the flag.

Every process is started here and stopped by its PID; loopback only.

Usage: cli_constraints_test.py BERTH_BINARY
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import Checks, CliSandbox, berth_dev, free_port, wait_until  # noqa: E402

check = Checks()
failures = check.failures


def main():
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as root:
        berth = CliSandbox(binary, root)
        env, work = berth.env, berth.work

        data = os.path.join(root, "data")
        os.makedirs(data)
        port = free_port()
        where = ["--data-dir", data, "--listen", f"127.0.0.1:{port}"]

        # Refused before anything starts.
        bad_name = berth("dev", *where, "--feature", "bad name")
        check(bad_name.returncode == 2 and "--feature" in bad_name.stderr
              and "'bad name'" in bad_name.stderr,
              f"dev --feature with a bad name: {bad_name.returncode} {bad_name.stderr!r}")
        no_node = berth("dev", *where, "--nodes", "2", "--feature", "ib@node-3")
        check(no_node.returncode == 2 and "ib@node-3" in no_node.stderr
              and "node-1..node-2" in no_node.stderr,
              f"dev --feature on a node it lacks: {no_node.returncode} {no_node.stderr!r}")

        dev = berth_dev(binary, data, port, "--nodes", "3", "--fake-gpus", "2xH100-80GB",
                        "--feature", "nvlink", "--feature", "ib@node-2,spot@node-3",
                        "--agent-heartbeat-interval", "200ms", env=env)
        try:
            dev.start().wait_http(f"http://127.0.0.1:{port}/readyz")
            wait_until(lambda: os.path.exists(os.path.join(root, ".config/berth/dev.toml")), 10,
                       "berth dev to announce itself")
            wait_until(lambda: berth("nodes").stdout.count(" up ") == 3, 30,
                       "three nodes to come up")

            # NODE STATE TYPE FREE FEATURES GPUS
            table = berth("nodes").stdout.splitlines()
            check(table and table[0].split()[4] == "FEATURES", f"a FEATURES column: {table!r}")
            features = {row.split()[0]: set(row.split()[4].split(",")) for row in table[1:]}
            check(features == {"node-1": {"nvlink"}, "node-2": {"ib", "nvlink"},
                               "node-3": {"nvlink", "spot"}},
                  f"berth nodes shows each node's features: {table!r}")

            def node_of(job):
                def placed():
                    shown = json.loads(berth("show", job, "--json").stdout)
                    if shown["placement"] and shown["state"] in ("running", "succeeded"):
                        return shown
                    return None
                return wait_until(placed, 30, f"job {job} to run")["placement"][0]["node"]

            def submit(*args):
                done = berth("submit", "--gpus", "1", *args)
                if done.returncode != 0 or not done.stdout.strip().isdigit():
                    raise SystemExit(f"FAIL: submit {args}: {done.returncode} {done.stderr!r}")
                return done.stdout.strip()

            on_ib = submit("-C", "ib", "--", "true")
            check(json.loads(berth("show", on_ib, "--json").stdout)["constraint"] == "ib",
                  "the job shows its constraint")
            on_plain = submit("--constraint", "!ib&!spot", "--", "true")
            on_listed = submit("-w", "node-3", "--", "true")
            on_rest = submit("-x", "node-[1-2]", "--", "true")
            script = os.path.join(work, "spot.sh")
            with open(script, "w") as f:
                f.write("#!/bin/bash\n#SBATCH --gres=gpu:1 --constraint=spot\ntrue\n")
            on_spot = submit(script)
            # A flag wins over a #BERTH line.
            berth_script = os.path.join(work, "ib.sh")
            with open(berth_script, "w") as f:
                f.write("#!/bin/bash\n#BERTH -C ib\ntrue\n")
            overridden = submit("-C", "spot", berth_script)
            from_line = submit(berth_script)
            placed = {job: node_of(job) for job in
                      (on_ib, on_plain, on_listed, on_rest, on_spot, overridden, from_line)}
            check(placed == {on_ib: "node-2", on_plain: "node-1", on_listed: "node-3",
                             on_rest: "node-3", on_spot: "node-3", overridden: "node-3",
                             from_line: "node-2"},
                  f"each job on the node its constraint names: {placed}")

            either = submit("--gpu-type", "A100-80GB|H100-80GB", "--", "true")
            check(json.loads(berth("show", either, "--json").stdout)["gpu_type"]
                  == "A100-80GB|H100-80GB", "--gpu-type A|B is the set")
            check(node_of(either).startswith("node-"), "a job of either model runs")

            # No node could ever host it: the server's message, exit 2.
            big = berth("submit", "--gpus", "8", "--", "true")
            check(big.returncode == 2 and big.stdout == "" and big.stderr.startswith(
                "berth submit: gpus: 8 per task, but the largest node has 2; ask --nodes 4 "
                "--gpus 2 (0 of 3 nodes could ever host it: 3 have fewer than 8 GPUs)")
                  and "--wait-for-nodes" in big.stderr,
                  f"refused: too many GPUs: {big.returncode} {big.stdout!r} {big.stderr!r}")
            nowhere = berth("submit", "-C", "infiniband", "--", "true")
            check(nowhere.returncode == 2 and nowhere.stderr.startswith(
                "berth submit: constraint: 0 of 3 nodes could ever host it: 3 do not match "
                "its constraint 'infiniband'"),
                  f"refused: no such feature: {nowhere.returncode} {nowhere.stderr!r}")

            waiting = submit("-C", "infiniband", "--wait-for-nodes", "--", "true")
            tally = "0 of 3 nodes could ever host it: 3 do not match its constraint 'infiniband'"
            why = wait_until(lambda: (lambda out: out if tally in out else None)(
                berth("why", waiting).stdout), 30, "the tally of the waiting job")
            check(any(line.strip() == tally for line in why.splitlines()),
                  f"berth why gives the tally a line: {why!r}")
            check(berth("cancel", waiting).returncode == 0, "cancel the waiting job")

            # Malformed before any request: the flag and the position.
            typo = berth("submit", "-C", "ib&", "--", "true")
            check(typo.returncode == 2 and "--constraint" in typo.stderr
                  and "position 4" in typo.stderr,
                  f"a malformed constraint: {typo.returncode} {typo.stderr!r}")
            empty = berth("submit", "--nodelist", "", "--", "true")
            check(empty.returncode == 2 and "--nodelist" in empty.stderr,
                  f"an empty nodelist: {empty.returncode} {empty.stderr!r}")
        finally:
            dev.stop()
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("ok: constraints, nodelists and refusals through the CLI")


if __name__ == "__main__":
    main()
