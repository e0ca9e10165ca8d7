#!/usr/bin/env python3
"""Issue 28, item 6: `berth submit -f MANIFEST` through the real binary,
without a server (the jobs themselves run in tests/kube_submit_test.py).

  - `--dry-run` prints the request the shipped examples make
    (examples/kubernetes/: the design note's Pod, a Job with parallelism 2),
    with no warning, and exits 0; flags given too override the manifest;
  - a field with no meaning in Berth is warned about on stderr with its path
    and the request is still printed; a manifest on stdin (-f -) works;
  - a bad manifest exits 2 with a message naming the field, and nothing on
    stdout, before any server is asked (the address given has none: that
    would be exit 3); so do several documents, a missing file, and a
    command given beside -f.

Usage: kube_cli_test.py BERTH_BINARY SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import Checks, CliSandbox, free_port  # noqa: E402

check = Checks()


def dry_run(berth, *args, stdin=None):
    result = subprocess.run([berth.binary, "submit", "--dry-run", *args], cwd=berth.work,
                            env=berth.env, input=stdin or "", capture_output=True, text=True,
                            timeout=60)
    check(result.returncode == 0, f"submit --dry-run {args}: {result.returncode} {result.stderr!r}")
    return (json.loads(result.stdout) if result.returncode == 0 else {}), result.stderr


def main():
    binary = os.path.abspath(sys.argv[1])
    examples = os.path.join(os.path.abspath(sys.argv[2]), "examples", "kubernetes")
    with tempfile.TemporaryDirectory() as root:
        berth = CliSandbox(binary, root)

        def write(name, text):
            path = os.path.join(berth.work, name)
            with open(path, "w") as f:
                f.write(text)
            return path

        pod, warnings = dry_run(berth, "-f", os.path.join(examples, "gpu-pod.yaml"))
        check(pod.get("name") == "gpu-task" and pod.get("gpus") == 1
              and pod.get("constraint") == "gpu-node=true" and pod.get("command") == ["train.py"]
              and pod.get("container") == {"image": "your-training-image:latest",
                                           "entrypoint": ["python"], "mount_home": False}
              and "workdir" not in pod and "tasks" not in pod,
              f"the design note's Pod: {pod}")
        check(warnings == "", f"the design note's Pod warns of nothing: {warnings!r}")

        job, warnings = dry_run(berth, "-f", os.path.join(examples, "train-job.yaml"),
                                "--queue", "vision", "--gpus", "2")
        container = job.get("container", {})
        check(job.get("tasks") == 2 and job.get("name") == "ddp-train"
              and job.get("gpus") == 2 and job.get("queue") == "vision"
              and job.get("cpus") == 2 and job.get("memory_mib") == 8192
              and job.get("time_limit_s") == 7200 and job.get("retries") == 1
              and job.get("command") == ["--nproc-per-node=1", "train.py", "--epochs", "10"],
              f"the Job with parallelism 2, --gpus and --queue over it: {job}")
        check(container.get("entrypoint") == ["torchrun"] and container.get("pull") == "missing"
              and container.get("workdir") == "/workspace"
              and container.get("env") == {"NCCL_DEBUG": "INFO"}
              and container.get("mounts") == [{"source": "/srv/datasets", "target": "/data",
                                               "read_only": True}],
              f"the Job's container: {container}")
        check(warnings == "", f"the Job warns of nothing: {warnings!r}")

        probed = ("apiVersion: v1\nkind: Pod\nmetadata: {name: probed}\nspec:\n"
                  "  containers:\n  - name: c\n    image: busybox\n"
                  "    livenessProbe: {exec: {command: ['true']}}\n")
        body, warnings = dry_run(berth, "-f", "-", stdin=probed)
        check(body.get("name") == "probed" and body.get("gpus") == 0,
              f"a Pod on stdin, no GPU asked: {body}")
        check("berth submit: -: spec.containers[0].livenessProbe: ignored, Berth has no probes"
              in warnings, f"the probe is warned about with its path: {warnings!r}")

        nowhere = ["--server", f"http://127.0.0.1:{free_port()}"]
        bad = write("bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n"
                    "  containers:\n  - name: c\n    image: busybox\n"
                    "    resources: {limits: {memory: 4GB}}\n")
        refusals = [
            (["-f", bad], "bad.yaml: spec.containers[0].resources.limits.memory: expected a "
                          "Kubernetes quantity"),
            (["-f", write("deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\n")],
             "kind: expected Pod (v1) or Job (batch/v1), got 'Deployment'"),
            (["-f", write("two.yaml", probed + "---\n" + probed)], "2 YAML documents"),
            (["-f", write("secret.yaml", probed + "    env:\n    - name: T\n"
                          "      valueFrom: {secretKeyRef: {name: s, key: k}}\n")],
             "spec.containers[0].env[0].valueFrom: not supported"),
            (["-f", os.path.join(berth.work, "missing.yaml")], "-f: cannot read"),
            (["-f", os.path.join(examples, "gpu-pod.yaml"), "--", "echo", "hi"],
             "-f: the manifest says what to run"),
        ]
        for args, message in refusals:
            result = berth("submit", *nowhere, *args)
            check(result.returncode == 2 and message in result.stderr and result.stdout == "",
                  f"submit {args[-1]}: exit 2 naming the field: {result.returncode} "
                  f"{result.stderr!r} {result.stdout!r}")

    if check.failures:
        print(f"{len(check.failures)} check(s) failed")
        return 1
    print("kube_cli_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
