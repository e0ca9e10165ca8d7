#!/usr/bin/env python3
"""Issue 28, item 6: `berth submit -f` runs Kubernetes manifests in
containers on a real `berth dev` with real podman.

NOT registered in tests/CMakeLists.txt on the branch that wrote it (kube):
it needs the containers branch (the request's `container` object, the
agent's podman runtime). Register it once both are merged.

Builds a local image with `podman import` of a rootfs made from Debian's
busybox-static (with a marker file only the image has; no registry), starts
`berth dev --nodes 3 --fake-gpus 1xH100-80GB` with gpu-node=true on node-1
and node-2 only (a node feature named "gpu-node=true" and a node label
gpu-node=true satisfy the same constraint, core/constraint.h), then:

  - the design note's Pod (examples/kubernetes/gpu-pod.yaml, its image and
    command swapped for the local image and a shell line) runs to success
    on node-1 or node-2, inside the image (the marker is there, a file only
    the host has is not), with its one GPU in CUDA_VISIBLE_DEVICES;
  - a batch/v1 Job with parallelism 2 runs as one gang of two tasks, one on
    each labelled node, each with its RANK and WORLD_SIZE 2, the manifest's
    env and workingDir, its hostPath volume mounted read-only; the probe it
    declares is warned about with its path;
  - the image is removed at the end.

Every process is started here and stopped by its PID; loopback only.

Usage: kube_submit_test.py BERTH_BINARY SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import Checks, CliSandbox, berth_dev, free_port, wait_until  # noqa: E402

check = Checks()
MARKER = "only-the-image-has-this"


def build_image(root, name):
    """A busybox-static image, imported from a rootfs (no registry)."""
    rootfs = os.path.join(root, "rootfs")
    os.makedirs(os.path.join(rootfs, "bin"))
    os.makedirs(os.path.join(rootfs, "work"))
    os.makedirs(os.path.join(rootfs, "tmp"))
    subprocess.run(["cp", "/bin/busybox", os.path.join(rootfs, "bin", "busybox")], check=True)
    for tool in ("sh", "cat", "echo", "test", "touch", "pwd", "env", "true"):
        os.symlink("busybox", os.path.join(rootfs, "bin", tool))
    with open(os.path.join(rootfs, "marker"), "w") as f:
        f.write(MARKER + "\n")
    tar = subprocess.Popen(["tar", "-C", rootfs, "-c", "."], stdout=subprocess.PIPE)
    subprocess.run(["podman", "import", "-", name], stdin=tar.stdout, check=True,
                   capture_output=True)
    tar.stdout.close()
    check(tar.wait() == 0, "tar of the rootfs")


def pod_manifest(examples, image, host_only):
    """The design note's Pod, with a local image and a command busybox has."""
    with open(os.path.join(examples, "gpu-pod.yaml")) as f:
        text = f.read()
    command = ('command: ["/bin/sh", "-c", "cat /marker; echo gpus=$CUDA_VISIBLE_DEVICES; '
               f'test -e {host_only} || echo no-host-file"]')
    lines = []
    for line in text.splitlines():
        if line.strip().startswith("image:"):
            line = line.replace("your-training-image:latest", image)
        elif line.strip().startswith("command:"):
            line = line[:len(line) - len(line.lstrip())] + command
        lines.append(line)
    return "\n".join(lines) + "\n"


def job_manifest(image, data):
    return f"""apiVersion: batch/v1
kind: Job
metadata:
  name: kube-gang
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: worker
        image: {image}
        imagePullPolicy: Never
        command: ["/bin/sh", "-c"]
        args:
        - echo rank=$RANK world=$WORLD_SIZE greeting=$GREETING dir=$PWD;
          cat /data/input; touch /data/written 2>/dev/null || echo read-only
        workingDir: /work
        env:
        - name: GREETING
          value: from-the-manifest
        resources:
          limits:
            nvidia.com/gpu: 1
        livenessProbe:
          exec: {{command: ["true"]}}
        volumeMounts:
        - name: data
          mountPath: /data
          readOnly: true
      nodeSelector:
        gpu-node: "true"
      volumes:
      - name: data
        hostPath:
          path: {data}
"""


def main():
    binary = os.path.abspath(sys.argv[1])
    examples = os.path.join(os.path.abspath(sys.argv[2]), "examples", "kubernetes")
    image = f"localhost/berth-kube-test-{os.getpid()}"
    with tempfile.TemporaryDirectory() as root:
        berth = CliSandbox(binary, root)
        build_image(root, image)
        data_dir = os.path.join(root, "data")
        os.makedirs(data_dir)
        port = free_port()
        dev = berth_dev(binary, data_dir, port, "--nodes", "3", "--fake-gpus", "1xH100-80GB",
                        "--feature", "gpu-node=true@node-1,gpu-node=true@node-2",
                        "--container-mount-allow", root,
                        "--agent-heartbeat-interval", "200ms", env=berth.env)
        try:
            dev.start().wait_http(f"http://127.0.0.1:{port}/readyz")
            wait_until(lambda: os.path.exists(os.path.join(root, ".config/berth/dev.toml")), 10,
                       "berth dev to announce itself")
            wait_until(lambda: berth("nodes").stdout.count(" up ") == 3, 30,
                       "three nodes to come up")

            host_only = os.path.join(root, "host-only-file")
            with open(host_only, "w") as f:
                f.write("host\n")
            pod_path = os.path.join(berth.work, "gpu-pod.yaml")
            with open(pod_path, "w") as f:
                f.write(pod_manifest(examples, image, host_only))
            run = berth("submit", "-f", pod_path, "--wait", timeout=180)
            check(run.returncode == 0 and run.stdout.strip().isdigit(),
                  f"the design note's Pod runs to success: {run.returncode} {run.stderr!r}")
            if run.stdout.strip().isdigit():
                pod = run.stdout.strip()
                shown = json.loads(berth("show", pod, "--json").stdout)
                check(shown["name"] == "gpu-task" and shown["placement"]
                      and shown["placement"][0]["node"] in ("node-1", "node-2"),
                      f"the Pod ran on a gpu-node=true node: {shown.get('placement')}")
                log = berth("logs", pod).stdout
                check(MARKER in log and "gpus=0" in log and "no-host-file" in log,
                      f"the Pod ran in the image with its GPU: {log!r}")

            shared = os.path.join(root, "shared")
            os.makedirs(shared)
            with open(os.path.join(shared, "input"), "w") as f:
                f.write("input-from-the-host\n")
            job_path = os.path.join(berth.work, "gang.yaml")
            with open(job_path, "w") as f:
                f.write(job_manifest(image, shared))
            run = berth("submit", "-f", job_path, "--wait", timeout=180)
            check(run.returncode == 0 and run.stdout.strip().isdigit(),
                  f"the Job with parallelism 2 runs to success: {run.returncode} {run.stderr!r}")
            check("spec.template.spec.containers[0].livenessProbe: ignored, Berth has no probes"
                  in run.stderr, f"its probe is warned about with its path: {run.stderr!r}")
            if run.stdout.strip().isdigit():
                gang = run.stdout.strip()
                shown = json.loads(berth("show", gang, "--json").stdout)
                nodes = sorted(task["node"] for task in shown["placement"])
                check(nodes == ["node-1", "node-2"],
                      f"one task on each gpu-node=true node: {shown['placement']}")
                for task in ("0", "1"):
                    log = berth("logs", gang, "--task", task).stdout
                    check(f"rank={task} world=2 greeting=from-the-manifest dir=/work" in log
                          and "input-from-the-host" in log and "read-only" in log,
                          f"task {task}: its rank, env, workdir and read-only mount: {log!r}")
                check(not os.path.exists(os.path.join(shared, "written")),
                      "nothing was written through the read-only mount")
        finally:
            dev.stop()
            subprocess.run(["podman", "rmi", "--force", image], capture_output=True)

    if check.failures:
        print(f"{len(check.failures)} check(s) failed")
        return 1
    print("kube_submit_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
