#!/usr/bin/env bash
# Records what a real Slurm 22.05 allocates, and which SLURM_* variables its
# batch scripts and srun steps see, for each option set in
# tests/data/slurm/option_sets.txt, into tests/data/slurm/golden/NAME.txt:
# the golden files Berth's reading of the same options is compared with
# (issue 29). Run by hand, as root, on Debian bookworm; not part of CI.
#
# It brings up ../shared/tools/slurm's single-host cluster (4 nodes x 8 fake
# GPUs, 32 CPUs, 256 GiB each) in a private directory, with memory made a
# consumable resource (CR_CPU_Memory, as GPU clusters configure it; the tool's
# default CR_CPU does not count memory), and stops it on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
tool_src=${SLURM_TOOL:-$repo/../shared/tools/slurm}
out_dir=$repo/tests/data/slurm/golden
work=$(mktemp -d /tmp/slurm-golden.XXXXXX)
chmod 755 "$work"  # munged and slurmd run as their own users

cp -r "$tool_src"/. "$work/tool"
sed -i 's/^SelectTypeParameters=CR_CPU$/SelectTypeParameters=CR_CPU_Memory/' "$work/tool/install.sh"
export SLURM_BENCH_DIR=$work/cluster SLURM_BENCH_NODES=4 SLURM_BENCH_GPUS_PER_NODE=8 \
  SLURM_BENCH_CPUS_PER_NODE=32 SLURM_BENCH_MEM_MB_PER_NODE=262144
trap '"$work/tool/stop.sh" --purge >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
"$work/tool/install.sh" >"$work/install.log" 2>&1 || { tail -20 "$work/install.log"; exit 1; }
# shellcheck disable=SC1091
. "$work/tool/env.sh"

# The batch script: its own variables, then one srun step's, per task.
cat >"$work/job.sh" <<'SCRIPT'
#!/bin/bash
echo "== batch"
env | grep -E '^SLURM_' | grep -vE '^SLURM_(BENCH_[A-Z_]+|WORKING_CLUSTER|CONF|JOB_ID|JOBID|ARRAY_JOB_ID|TASK_PID|JOB_START_TIME|JOB_END_TIME|SUBMIT_DIR|WORKING_DIR|JOB_UID|JOB_GID|SUBMIT_HOST|TOPOLOGY_ADDR)=' | sort
echo "== step"
srun bash -c 'echo "task $SLURM_PROCID: SLURM_LOCALID=$SLURM_LOCALID SLURM_NODEID=$SLURM_NODEID SLURMD_NODENAME=$SLURMD_NODENAME SLURM_STEP_NUM_TASKS=$SLURM_STEP_NUM_TASKS SLURM_STEP_NODELIST=$SLURM_STEP_NODELIST CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset} SLURM_GPUS_ON_NODE=${SLURM_GPUS_ON_NODE-unset}"' | sort -n -k2
sleep 4
SCRIPT
chmod +x "$work/job.sh"

# Fields that differ from run to run (times, ids, paths) become placeholders.
normalize() {
  sed -E -e 's/^(JobId)=[0-9]+/\1=ID/' \
    -e 's/(SubmitTime|EligibleTime|AccrueTime|StartTime|EndTime|LastSchedEval)=[^ ]+/\1=T/g' \
    -e 's/(RunTime)=[^ ]+/\1=T/' -e 's/(AllocNode:Sid)=[^ ]+/\1=HOST/' \
    -e 's#(WorkDir|StdErr|StdOut|Command)=[^ ]+#\1=PATH#' -e 's/[ ]+$//' -e '/^$/d'
}

mkdir -p "$out_dir"
grep -vE '^(#|$)' tests/data/slurm/option_sets.txt | while read -r name options; do
  # shellcheck disable=SC2086
  id=$(cd "$work" && sbatch --parsable --job-name="$name" --output="$work/$name.out" $options "$work/job.sh")
  for _ in $(seq 100); do
    state=$(squeue -h -j "$id" -o %T 2>/dev/null || true)
    [ "$state" = RUNNING ] && break
    sleep 0.2
  done
  {
    echo "# options: $options"
    echo "== scontrol show job -d"
    scontrol show job -d "$id" | normalize
    for _ in $(seq 100); do
      [ -z "$(squeue -h -j "$id" -o %T 2>/dev/null)" ] && break
      sleep 0.2
    done
    cat "$work/$name.out"
  } >"$out_dir/$name.txt"
  echo "slurm-golden: $name ($options): $(grep -o 'NumNodes=[^ ]* NumCPUs=[^ ]* NumTasks=[^ ]*' "$out_dir/$name.txt")"
done
