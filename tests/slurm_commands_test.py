#!/usr/bin/env python3
"""Issue 29, item 4: the Slurm commands as links of berth, against a real
`berth dev` (server and agents, two nodes of 4 fake GPUs).

Runs squeue, scancel, sinfo, scontrol, sacct and sbatch as `PATH=build/slurm:$PATH` makes
them, for running, pending (Resources, JobHeldUser), completed, failed and
cancelled jobs and an array, and checks that what they print reads as real
Slurm's does: the headers of tests/data/slurm/golden/states.txt, Slurm's
state and reason words, exit codes and error messages.

Usage: slurm_commands_test.py BERTH_BINARY SOURCE_DIR
"""
import json
import os
import pwd
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import Checks, CliSandbox, berth_dev, free_port, wait_until  # noqa: E402

check = Checks()


def golden_sections(source_dir):
    """Each '== COMMAND' of states.txt and the lines under it (the first
    such section of a name)."""
    sections, name = {}, None
    with open(os.path.join(source_dir, "tests/data/slurm/golden/states.txt")) as f:
        for line in f.read().splitlines():
            if line.startswith("== "):
                name = line[3:]
                sections.setdefault(name, [])
                if sections[name]:
                    name = None  # a repeated name: keep the first
            elif name is not None:
                sections[name].append(line)
    return sections


def acct_node(result, job):
    """The node sacct printed for a job (where it ran is the scheduler's choice)."""
    for line in result.stdout.splitlines():
        if line.startswith(f"{job}|"):
            return line.rsplit("|", 1)[1]
    return None


def main():
    binary = os.path.abspath(sys.argv[1])
    golden = golden_sections(sys.argv[2])
    headers = {name: lines[0] for name, lines in golden.items() if lines}
    slurm_dir = os.path.join(os.path.dirname(binary), "slurm")
    with tempfile.TemporaryDirectory() as root:
        berth = CliSandbox(binary, root)
        user = pwd.getpwuid(os.getuid()).pw_name  # berth dev's admin token is its user's
        env = dict(berth.env, PATH=slurm_dir + os.pathsep + berth.env["PATH"])

        def slurm(*args):
            """A Slurm command, found on PATH as a user's shell finds it."""
            return subprocess.run(list(args), cwd=berth.work, env=env, capture_output=True,
                                  text=True, timeout=60)

        data = os.path.join(root, "data")
        os.makedirs(data)
        port = free_port()
        dev = berth_dev(binary, data, port, "--nodes", "2", "--fake-gpus", "4xH100-80GB",
                        "--agent-heartbeat-interval", "200ms", env=berth.env)
        try:
            dev.start().wait_http(f"http://127.0.0.1:{port}/readyz")
            wait_until(lambda: berth("nodes").stdout.count(" up ") == 2, 20, "two nodes up")

            def submit(*args):
                out = berth("submit", *args)
                check(out.returncode == 0, f"submit {args}: {out.stderr!r}")
                return out.stdout.strip().splitlines()[0]

            def state(job):
                return json.loads(berth("show", job, "--json").stdout)["state"]

            big1 = submit("--gpus", "4", "--name", "big1", "--", "sleep", "300")
            big2 = submit("--gpus", "4", "--name", "big2", "--", "sleep", "300")
            ok = submit("--gpus", "0", "--name", "ok", "--", "true")
            fails = submit("--gpus", "0", "--name", "fails", "--", "sh", "-c", "exit 3")
            wait_until(lambda: state(big1) == "running" and state(big2) == "running", 30,
                       "the big jobs to run")
            waits = submit("--gpus", "4", "--name", "waits", "--", "true")
            held = submit("--hold", "--gpus", "1", "--name", "held", "--", "true")
            wait_until(lambda: state(ok) == "succeeded" and state(fails) == "failed", 30,
                       "the short jobs to end")
            # The scheduler's reason for the waiting job comes with its next cycle.
            wait_until(lambda: "waits|PENDING|Resources" in
                       slurm("squeue", "-h", "-o", "%j|%T|%r").stdout, 20,
                       "the waiting job's reason")

            # squeue: Slurm's header, one line per live job, Slurm's words.
            out = slurm("squeue")
            lines = out.stdout.splitlines()
            check(out.returncode == 0 and lines[0] == headers["squeue"],
                  f"squeue's header is Slurm's: {lines[:1]!r} {out.stderr!r}")
            rows = {line.split()[2]: line.split() for line in lines[1:]}
            check(set(rows) == {"big1", "big2", "waits", "held"},
                  f"squeue lists the live jobs: {sorted(rows)}")
            check(all(len(row) == 8 for row in rows.values()),
                  f"every squeue line has Slurm's 8 columns: {lines!r}")
            check(rows["big1"][4] == "R" and rows["big1"][7].startswith("node-"),
                  f"a running job: R on its node: {rows.get('big1')}")
            check(rows["waits"][4] == "PD" and rows["waits"][7] == "(Resources)",
                  f"a waiting job: PD (Resources): {rows.get('waits')}")
            check(rows["held"][7] == "(JobHeldUser)", f"a held job: {rows.get('held')}")

            fields = slurm("squeue", "-h", "-t", "all", "-o", "%i|%T|%r|%u|%P").stdout
            by_id = {line.split("|")[0]: line.split("|") for line in fields.splitlines()}
            check(by_id.get(ok, [None, None])[1] == "COMPLETED" and
                  by_id.get(fails, [None, None, None])[1:3] == ["FAILED", "NonZeroExitCode"],
                  f"-t all shows ended jobs in Slurm's words: {fields!r}")
            check(by_id.get(big1, [None] * 5)[3:] == [user, "default"],
                  f"%u and %P: the user and the default queue: {by_id.get(big1)}")
            # Slurm's order: partition, then pending before running before
            # ended (COMPLETED before FAILED), higher priority first, then id.
            pending = slurm("squeue", "-h", "-t", "PD", "-o", "%j").stdout.split()
            check(pending == ["waits", "held"], f"-t PD: the pending jobs only: {pending}")
            named = slurm("squeue", "-h", "-j", f"{fails},{ok}", "-o", "%i %t").stdout.split()
            check(named == [ok, "CD", fails, "F"], f"-j names jobs, ended ones too: {named}")
            me = slurm("squeue", "--me", "-h", "-o", "%j").stdout.split()
            check(sorted(me) == ["big1", "big2", "held", "waits"], f"--me: {me}")
            check(slurm("squeue", "-h", "-u", "nobody-here").stdout == "", "-u another user")
            check(slurm("squeue", "-h", "-p", "elsewhere").stdout == "", "-p another partition")
            wide = slurm("squeue", "-O", "JobID,Name,State").stdout.splitlines()
            check(wide[0] == "JOBID               NAME                STATE               ",
                  f"-O: 20-wide columns: {wide[:1]!r}")
            start = slurm("squeue", "--start").stdout.splitlines()
            check(start[0].split() == ["JOBID", "PARTITION", "NAME", "USER", "ST", "START_TIME",
                                       "NODES", "SCHEDNODES", "NODELIST(REASON)"]
                  and all(" PD " in line for line in start[1:]) and len(start) == 3,
                  f"--start: pending jobs with START_TIME: {start!r}")
            bad = slurm("squeue", "-x")
            check(bad.returncode == 1 and "invalid option" in bad.stderr,
                  f"a bad squeue option exits 1: {bad.returncode} {bad.stderr!r}")
            bad = slurm("squeue", "-t", "sleeping")
            check(bad.returncode == 1 and
                  "squeue: error: Invalid job state specified: sleeping" in bad.stderr,
                  f"a bad state: {bad.stderr!r}")

            # sinfo: the default queue is the default partition, marked '*'.
            info = slurm("sinfo").stdout.splitlines()
            check(info[0] == headers["sinfo"] and info[1].split() ==
                  ["default*", "up", "infinite", "2", "alloc", "node-[1-2]"],
                  f"sinfo as Slurm's: {info!r}")
            nodes = slurm("sinfo", "-N", "-h", "-o", "%N %P %T %c %G").stdout.splitlines()
            check([line.split()[:3] for line in nodes] ==
                  [["node-1", "default*", "allocated"], ["node-2", "default*", "allocated"]]
                  and all(line.endswith("gpu:H100-80GB:4") for line in nodes),
                  f"sinfo -N: a line per node: {nodes!r}")

            # scontrol show job: Slurm's keys and values for ended jobs.
            shown = slurm("scontrol", "show", "job", "-o", fails).stdout.split()
            check("JobState=FAILED" in shown and "ExitCode=3:0" in shown and
                  "Reason=NonZeroExitCode" in shown and "JobName=fails" in shown,
                  f"scontrol show job -o, failed: {shown!r}")
            shown = slurm("scontrol", "show", "job", ok).stdout
            check("JobState=COMPLETED Reason=None" in shown and "ExitCode=0:0" in shown and
                  shown.startswith(f"JobId={ok} JobName=ok\n   UserId={user}("),
                  f"scontrol show job, completed: {shown!r}")
            for argv, name in ((("scontrol", "show", "job", "999999"), "scontrol show job 999999"),
                               (("squeue", "-j", "999999"), "squeue -j 999999"),
                               (("squeue", "-t", "bogus"), "squeue -t bogus")):
                result = slurm(*argv)
                printed = (result.stdout + result.stderr).split("\n")
                check(printed + [f"rc={result.returncode}"] ==
                      golden[name][:-1] + [""] + golden[name][-1:],
                      f"{' '.join(argv)} prints and exits as Slurm's: {printed!r}")
            refused = slurm("scontrol", "hold", big1)
            check(refused.returncode == 1 and refused.stderr ==
                  f"Job is no longer pending execution for job {big1}\n",
                  f"scontrol hold of a running job, as Slurm refuses it: {refused.stderr!r}")
            node = slurm("scontrol", "show", "node", "node-1").stdout
            check(node.startswith("NodeName=node-1 ") and "State=ALLOCATED" in node,
                  f"scontrol show node: {node!r}")

            # scancel: Slurm's messages and exit codes.
            # Slurm 22.05 cancels an unknown or ended job silently, exit 0
            # (states.txt, "scancel 999999"), and names it with -v.
            gone = slurm("scancel", "999999")
            check(gone.returncode == 0 and gone.stderr == "" and
                  gone.returncode == int(golden["scancel 999999"][-1].split("=")[1]),
                  f"scancel of an unknown job: {gone.returncode} {gone.stderr!r}")
            gone = slurm("scancel", "-v", "999999")
            check(gone.returncode == 0 and gone.stderr ==
                  "scancel: error: Kill job error on job id 999999: Invalid job id specified\n",
                  f"scancel -v of an unknown job: {gone.returncode} {gone.stderr!r}")
            # --signal sends a signal and cancels nothing (WINCH: sleep ignores
            # it; tests/slurm_signals_test.py has the traps).
            signalled = slurm("scancel", "--signal=WINCH", big1)
            check(signalled.returncode == 0 and signalled.stderr == "",
                  f"--signal is sent: {signalled.returncode} {signalled.stderr!r}")
            check(state(big1) == "running", "--signal cancels nothing")
            nothing = slurm("scancel")
            check(nothing.returncode == 1 and nothing.stdout + nothing.stderr ==
                  "\n".join(golden["scancel (nothing named)"][:-1]) + "\n",
                  f"scancel with nothing named: as Slurm's: {nothing.stderr!r}")
            byname = slurm("scancel", "-n", "waits")
            check(byname.returncode == 0, f"scancel -n: {byname.stderr!r}")
            cancelled = slurm("scancel", big2)
            check(cancelled.returncode == 0, f"scancel ID: {cancelled.stderr!r}")
            wait_until(lambda: state(big2) == "cancelled" and state(waits) == "cancelled", 30,
                       "the cancelled jobs to end")
            states = slurm("squeue", "-h", "-t", "CA", "-o", "%j %T").stdout.split("\n")
            check(sorted(line for line in states if line) == ["big2 CANCELLED", "waits CANCELLED"],
                  f"squeue -t CA: {states!r}")
            again = slurm("scancel", ok)
            check(again.returncode == 0 and again.stderr == "",
                  f"scancel of an ended job: {again.returncode} {again.stderr!r}")
            again = slurm("scancel", "-v", ok)
            check(again.returncode == 0 and again.stderr.endswith(
                  f"Kill job error on job id {ok}: Job/step already completing or completed\n"),
                  f"scancel -v of an ended job: {again.stderr!r}")

            # sacct: the history, ended jobs with Slurm's states and exit codes.
            acct = slurm("sacct", "-X", "-n", "-P", "-j", f"{ok},{fails},{big2}",
                         "-o", "JobID,JobIDRaw,JobName,State,ExitCode,Partition,NodeList")
            uid = str(os.getuid())
            check(acct.returncode == 0 and acct.stdout.splitlines() == [
                f"{ok}|{ok}|ok|COMPLETED|0:0|default|{acct_node(acct, ok)}",
                f"{fails}|{fails}|fails|FAILED|3:0|default|{acct_node(acct, fails)}",
                f"{big2}|{big2}|big2|CANCELLED by {uid}|0:0|default|{acct_node(acct, big2)}"],
                f"sacct -P: {acct.stdout!r} {acct.stderr!r}")
            table = slurm("sacct", "-S", "2001-01-01").stdout.splitlines()
            check(table[0].split() == ["JobID", "JobName", "Partition", "Account", "AllocCPUS",
                                       "State", "ExitCode"] and table[1].startswith("------------ ")
                  and len(table) == 2 + 6, f"sacct's default columns, every job: {table!r}")
            check(slurm("sacct", "-n", "-S", "2001-01-01", "-E", "2001-01-02").stdout == "",
                  "sacct -S/-E: a window without jobs")
            bad = slurm("sacct", "-o", "Bogus")
            check(bad.returncode == 1 and 'Invalid field requested: "Bogus"' in bad.stderr,
                  f"sacct names a bad field: {bad.stderr!r}")

            # scontrol release: the held job waits for resources like any other.
            check(slurm("scontrol", "release", held).returncode == 0, "scontrol release")
            check(state(held) != "held", f"released: {state(held)}")

            # sbatch: a script's #SBATCH lines under the command line's options.
            with open(os.path.join(berth.work, "job.sh"), "w") as f:
                f.write("#!/bin/sh\n#SBATCH --job-name=scripted\n#SBATCH --time=10:00\n"
                        "#SBATCH --gres=gpu:0\n#SBATCH --hold\necho hi\n")
            submitted = slurm("sbatch", "-J", "fromcli", "job.sh")
            words = submitted.stdout.split()
            check(submitted.returncode == 0 and words[:3] == ["Submitted", "batch", "job"],
                  f"sbatch prints Slurm's line: {submitted.stdout!r} {submitted.stderr!r}")
            batch = words[-1] if words else "0"
            described = slurm("squeue", "-h", "-j", batch, "-o", "%j|%l|%T|%r").stdout.strip()
            check(described == "fromcli|10:00|PENDING|JobHeldUser",
                  f"sbatch's job: -J over the script's name, its --time and --hold: {described!r}")
            wrapped = slurm("sbatch", "--parsable", "--gpus=0", "--wrap", "exit 3")
            wrap_id = wrapped.stdout.strip()
            check(wrapped.returncode == 0 and wrap_id.isdigit(),
                  f"sbatch --parsable prints the id: {wrapped.stdout!r} {wrapped.stderr!r}")
            wait_until(lambda: state(wrap_id) == "failed", 30, "the --wrap job to fail")
            shown = slurm("sacct", "-n", "-P", "-j", wrap_id, "-o", "JobName,State,ExitCode").stdout
            check(shown == "wrap|FAILED|3:0\nbatch|FAILED|3:0\n",
                  f"a --wrap job is 'wrap', its script's row 'batch': {shown!r}")
            # sbatch -W: returns when the job has ended, with its exit code;
            # for an array, the highest of its elements'.
            waited = slurm("sbatch", "-W", "--gpus=0", "--wrap", "sleep 1; exit 4")
            waited_id = waited.stdout.split()[-1] if waited.stdout.split() else "0"
            check(waited.returncode == 4 and waited.stdout.startswith("Submitted batch job "),
                  f"sbatch -W exits with the job's code: {waited.returncode} {waited.stdout!r} "
                  f"{waited.stderr!r}")
            check(waited_id.isdigit() and state(waited_id) == "failed",
                  f"sbatch -W returned after the job's end: {waited_id!r}")
            array = slurm("sbatch", "--wait", "--parsable", "--gpus=0", "--array=0-2",
                          "--wrap", "exit $((SLURM_ARRAY_TASK_ID * 3 % 5))")
            check(array.returncode == 3, f"sbatch --wait on an array exits with the highest "
                  f"code (0, 3, 1): {array.returncode} {array.stderr!r}")
            # The submitting shell's environment reaches the job (--export's
            # default, ALL); NONE, a list and SBATCH_EXPORT as Slurm reads them.
            def exported(*args, extra=None):
                shell = dict(env, LR="0.25", **(extra or {}))
                return subprocess.run(["sbatch", "-W", "--gpus=0", *args, "--wrap",
                                       'test "$LR" = 0.25 && test -n "$PATH"'],
                                      cwd=berth.work, env=shell, capture_output=True,
                                      text=True, timeout=60).returncode
            check(exported() == 0, "sbatch: the shell's LR and PATH reach the job")
            check(exported("--export=NONE") == 1, "sbatch --export=NONE: no LR")
            check(exported("--export=PATH,LR") == 0, "sbatch --export=PATH,LR")
            check(exported(extra={"SBATCH_EXPORT": "NONE"}) == 1, "SBATCH_EXPORT=NONE")
            check(exported("--export=ALL", extra={"SBATCH_EXPORT": "NONE"}) == 0,
                  "the command line over SBATCH_EXPORT")
            # sacct -j ARRAY_INDEX.batch: that element's batch row alone.
            array_id = array.stdout.strip()
            rows = slurm("sacct", "-n", "-P", "-j", f"{array_id}_1.batch",
                         "-o", "JobID,State,ExitCode").stdout
            check(rows == f"{array_id}_1.batch|FAILED|3:0\n",
                  f"sacct -j ARRAY_INDEX.batch: {rows!r}")
            refused = slurm("sbatch", "--wrap", "true", "job.sh")
            check(refused.returncode == 1 and refused.stderr.startswith("sbatch: error: "),
                  f"sbatch refuses --wrap with a script: {refused.stderr!r}")
            check(slurm("scancel", batch).returncode == 0, "scancel the held batch job")

            # An array: elements are JOB_INDEX; scancel JOB_INDEX cancels one.
            first = submit("--array", "0-2", "--gpus", "0", "--name", "arr", "--", "sleep", "300")
            # -r: one line per element, waiting ones too (Slurm folds them without it).
            ids = slurm("squeue", "-h", "-r", "-n", "arr", "-o", "%i").stdout.split()
            check(sorted(ids) == [f"{first}_0", f"{first}_1", f"{first}_2"], f"array ids: {ids}")
            check(slurm("scancel", f"{first}_1").returncode == 0, "scancel JOB_INDEX")
            wait_until(lambda: sorted(slurm("squeue", "-h", "-r", "-n", "arr", "-o",
                                            "%i").stdout.split())
                       == [f"{first}_0", f"{first}_2"], 30, "only element 1 to be cancelled")
            # The array's id (its first job's) names every element, as in Slurm.
            check(slurm("scancel", first).returncode == 0, "scancel ARRAY_ID")
            wait_until(lambda: slurm("squeue", "-h", "-n", "arr").stdout == "", 30,
                       "the whole array to be cancelled")
            check(slurm("scancel", "-u", user).returncode == 0, "scancel -u")
            wait_until(lambda: slurm("squeue", "-h").stdout == "", 30, "every job to end")
        finally:
            dev.stop()
    if check.failures:
        print(f"{len(check.failures)} check(s) failed")
        return 1
    print("slurm commands: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
