#!/usr/bin/env bash
# Installs what Berth needs to build and test on Debian 12 (bookworm).
# Idempotent; uses sudo when not run as root.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libgmock-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev zlib1g-dev
  libsqlite3-dev libpq-dev libssl-dev libcpp-httplib-dev libtomlplusplus-dev
  libboost1.81-dev  # Beast and Asio: the HTTP servers (src/http/)
  libgoogle-perftools-dev  # tcmalloc, the berth binary's allocator
  libyaml-cpp-dev  # Kubernetes Pod and Job manifests: berth submit -f (src/cli/kube_manifest.h)
  postgresql prometheus
  python3 clang-format
  faketime  # steps the wall clock of running processes (tests/node_lease_e2e_test.py)
  chromium  # headless, for the dashboard test (tests/dashboard_test.py)
  clang libclang-rt-14-dev
  # Jobs in container images (issue 28): the agent's default runtime, and
  # runc, which works on cgroup v1 hosts where crun does not
  # (tests/containers_e2e_test.py runs real containers).
  podman runc
  busybox-static  # the test image's only binary (tests/containers_e2e_test.py)
  # torch.distributed over gloo for /usr/bin/python3: the multi-node DDP
  # batch script of issue 29 (tests/slurm_steps_test.py)
  python3-torch
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
