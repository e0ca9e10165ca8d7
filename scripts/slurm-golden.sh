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
#
# SLURM_GOLDEN_SACCT=1 records golden/sacct.txt instead: the same cluster
# with accounting (slurmdbd; scripts/slurm-golden-accounting.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
tool_src=${SLURM_TOOL:-$repo/../shared/tools/slurm}
out_dir=$repo/tests/data/slurm/golden
work=$(mktemp -d /tmp/slurm-golden.XXXXXX)
chmod 755 "$work"  # munged and slurmd run as their own users

cp -r "$tool_src"/. "$work/tool"
sed -i 's/^SelectTypeParameters=CR_CPU$/SelectTypeParameters=CR_CPU_Memory/' "$work/tool/install.sh"
# The partition's default memory for a job that asks none, as GPU clusters
# set it (DefMemPerGPU for jobs with GPUs, DefMemPerCPU for the others);
# without them a job asking no memory gets the whole node's. The Berth side
# of the golden test configures its queue the same (queue keys
# default_memory_per_gpu_mib and default_memory_per_cpu_mib). Not for
# sacct.txt, whose jobs were recorded (and are modelled) with the node's.
if [ -z "${SLURM_GOLDEN_SACCT:-}" ]; then
  sed -i 's/^\(  echo "PartitionName=.*OverSubscribe=NO\)"$/\1 DefMemPerGPU=24576 DefMemPerCPU=3072"/' \
    "$work/tool/install.sh"
  grep -q 'DefMemPerGPU=24576 DefMemPerCPU=3072' "$work/tool/install.sh"
fi
# Job ids of two digits, as wide as the "ID" that replaces them below (so
# columns keep their widths), and none a count or node number printed
# beside them (with the option sets they run to 98).
sed -i 's/^MinJobAge=3600$/MinJobAge=3600\nFirstJobId=70/' "$work/tool/install.sh"
export SLURM_BENCH_DIR=$work/cluster SLURM_BENCH_NODES=4 SLURM_BENCH_GPUS_PER_NODE=8 \
  SLURM_BENCH_CPUS_PER_NODE=32 SLURM_BENCH_MEM_MB_PER_NODE=262144
accounting=${SLURM_GOLDEN_SACCT:-}
# shellcheck disable=SC2034 # MariaDB's PID, set by accounting_database
db_pid=
cleanup() {
  local rc=$?
  if [ "$rc" != 0 ]; then  # what the daemons said, before it is removed
    tail -n 15 "$work"/cluster/log/slurmctld.log "$work"/slurmdbd.log "$work"/slurmdbd.out \
      "$work"/db/error.log 2>/dev/null >&2 || true
  fi
  "$work/tool/stop.sh" --purge >/dev/null 2>&1 || true
  [ -z "$accounting" ] || accounting_stop
  rm -rf "$work"
}
trap cleanup EXIT
# SLURM_GOLDEN_SACCT=1: the cluster keeps accounting (slurmdbd on a private
# MariaDB), and only sacct.txt is recorded (with an account the other
# files' Account=(null) would change).
if [ -n "$accounting" ]; then
  # shellcheck source=scripts/slurm-golden-accounting.sh
  . "$repo/scripts/slurm-golden-accounting.sh"
  accounting_packages
  accounting_database
  accounting_hook
fi
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
if [ -n "$accounting" ]; then
  record_sacct "$out_dir/sacct.txt" "$out_dir/array_queue.txt"
  echo "slurm-golden: sacct recorded"
  exit 0
fi
# SLURM_GOLDEN_STATES_ONLY=1 records states.txt alone (a minute, not four).
option_sets=tests/data/slurm/option_sets.txt
[ -z "${SLURM_GOLDEN_STATES_ONLY:-}" ] || option_sets=/dev/null
sed -E '/^(#|$)/d' "$option_sets" | while read -r name options; do
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

# What Slurm's commands print for jobs in each state: squeue's reasons for
# pending jobs, scontrol's states and exit codes for ended ones.
# A job filling the cluster, then one waiting for it (Resources), one behind
# that (Priority), one on a dependency, one held.
states=$out_dir/states.txt
cd "$work"
fill=$(sbatch --parsable --job-name=fill -N 4 --gpus-per-node=8 --wrap 'sleep 30')
sleep 2
waits=$(sbatch --parsable --job-name=waits -N 1 --gpus-per-node=8 --wrap 'true')
behind=$(sbatch --parsable --job-name=behind -N 1 --gpus-per-node=8 --wrap 'true')
dep=$(sbatch --parsable --job-name=dep -d "afterok:$fill" --wrap 'true')
held=$(sbatch --parsable --job-name=held --hold --wrap 'true')
sleep 3
ids="$fill,$waits,$behind,$dep,$held"
{
  echo "== squeue"
  squeue -j "$ids"
  echo "== squeue -o '%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R'"
  squeue -j "$ids" -o '%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R'
  echo "== squeue -O JobID,Name,State,Reason,NumNodes,NumTasks,tres-per-node"
  squeue -j "$ids" -O JobID,Name,State,Reason,NumNodes,NumTasks,tres-per-node
  echo "== squeue -h -o '%i|%T|%r'"
  squeue -h -j "$ids" -o '%i|%T|%r'
  echo "== sinfo"
  sinfo
  echo "== sinfo -N -h -o '%N %P %T %c %G'"
  sinfo -N -h -o '%N %P %T %c %G'
  # The Slurm commands of the client (issue 29 item 4) print these too.
  echo "== squeue -h -o '%j|%l|%L|%C|%b|%D|%a|%q|%Y|%r|%t|%m'"
  squeue -h -j "$ids" -o '%j|%l|%L|%C|%b|%D|%a|%q|%Y|%r|%t|%m'
  echo "== squeue --start (header)"
  squeue --start -j "$ids" | head -1
  echo "== squeue -l (header)"
  squeue -l -j "$ids" | sed -n 2p
  echo "== sinfo -o '%P %a %l %D %T %t %N %c %G %m'"
  sinfo -o '%P %a %l %D %T %t %N %c %G %m'
  echo "== sinfo -N (header)"
  sinfo -N | head -1
} | sed -E "s/\b($fill|$waits|$behind|$dep|$held)\b/ID/g" >"$states"
scancel "$fill" "$waits" "$behind" "$dep" "$held"

# Ended jobs: completed, failed with 3, killed by a signal, cancelled,
# timed out (a one-minute limit: Slurm's limits are whole minutes).
ok=$(sbatch --parsable --job-name=ok --wrap 'true')
fails=$(sbatch --parsable --job-name=fails --wrap 'exit 3')
killed=$(sbatch --parsable --job-name=killed --wrap 'kill -9 $$')
cancelled=$(sbatch --parsable --job-name=cancelled --wrap 'sleep 60')
timeout=$(sbatch --parsable --job-name=timeout -t 1 --wrap 'sleep 300')
sleep 3
scancel "$cancelled"
for _ in $(seq 150); do
  [ -z "$(squeue -h -j "$timeout" -o %T 2>/dev/null)" ] && break
  sleep 1
done
for id in $ok $fails $killed $cancelled $timeout; do
  echo "== scontrol show job -o (${id})"
  scontrol show job -o "$id" | normalize | tr ' ' '\n' |
    grep -E '^(JobName|JobState|Reason|ExitCode|DerivedExitCode|Restarts|TimeLimit)='
done | sed -E 's/\(([0-9]+)\)$/(ID)/' >>"$states"

# Errors: what the commands print (stdout and stderr) and exit with.
errors() {
  local rc
  echo "== scancel 999999"
  rc=0; scancel 999999 2>&1 || rc=$?; echo "rc=$rc"
  echo "== scancel (a completed job)"
  rc=0; scancel "$ok" 2>&1 || rc=$?; echo "rc=$rc"
  echo "== scancel (nothing named)"
  rc=0; scancel 2>&1 || rc=$?; echo "rc=$rc"
  echo "== squeue -j 999999"
  rc=0; squeue -j 999999 2>&1 || rc=$?; echo "rc=$rc"
  echo "== squeue -t bogus"
  rc=0; squeue -t bogus 2>&1 || rc=$?; echo "rc=$rc"
  echo "== scontrol show job 999999"
  rc=0; scontrol show job 999999 2>&1 || rc=$?; echo "rc=$rc"
}
errors | sed -E "s/\b$ok\b/ID/g" >>"$states"
echo "slurm-golden: states recorded"
