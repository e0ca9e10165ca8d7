# shellcheck shell=bash disable=SC2154 # $work and db_pid are slurm-golden.sh's
# Sourced by scripts/slurm-golden.sh when SLURM_GOLDEN_SACCT=1: accounting
# for its private Slurm cluster (slurmdbd on a private MariaDB, both in
# $work and stopped by accounting_stop), and the recording of what sacct
# prints for jobs in each state into golden/sacct.txt.

golden_db_port=${SLURM_GOLDEN_DB_PORT:-16306}
golden_dbd_port=${SLURM_GOLDEN_DBD_PORT:-16819}

# slurmdbd and MariaDB from bookworm, installed once (the daemons the
# packages would start are kept off by the machine's policy-rc.d, or by one
# this function puts there for the install and removes after).
accounting_packages() {
  local need=() p own_policy=
  for p in slurmdbd mariadb-server; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  [ ${#need[@]} -gt 0 ] || return 0
  if ! apt-cache policy slurmdbd 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    apt-get update -qq
  fi
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    own_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" \
    >"$work/apt.log" 2>&1 || { tail -n 30 "$work/apt.log" >&2; exit 1; }
  [ -z "$own_policy" ] || rm -f /usr/sbin/policy-rc.d
}

# A MariaDB of its own on 127.0.0.1:$golden_db_port, data in $work/db.
accounting_database() {
  local db=$work/db
  mkdir -p "$db/data"
  chown -R mysql:mysql "$db"
  mariadb-install-db --no-defaults --user=mysql --datadir="$db/data" \
    --auth-root-authentication-method=socket --skip-test-db >"$db/install.log" 2>&1 || {
    tail -n 20 "$db/install.log" >&2
    exit 1
  }
  # slurmdbd asks for a 256M buffer pool and a 900 s lock wait (it warns otherwise).
  mariadbd --no-defaults --user=mysql --datadir="$db/data" --socket="$db/mysqld.sock" \
    --port="$golden_db_port" --bind-address=127.0.0.1 --pid-file="$db/mariadbd.pid" \
    --innodb-buffer-pool-size=256M --innodb-lock-wait-timeout=900 \
    --log-error="$db/error.log" </dev/null >/dev/null 2>&1 &
  db_pid=$!
  for _ in $(seq 100); do
    [ -S "$db/mysqld.sock" ] && break
    sleep 0.2
  done
  mariadb --no-defaults -S "$db/mysqld.sock" -u root -e "
    CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'golden';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" || {
    tail -n 20 "$db/error.log" >&2
    exit 1
  }
}

# slurm.conf keeps accounting in slurmdbd, which must be up (with the
# cluster, an account and root in it) before slurmctld starts: the copied
# install.sh calls a hook just before it starts slurmctld. (The clients
# find munge's socket for slurmdbd in AccountingStoragePass, not AuthInfo;
# GPUs are in AllocTRES only when AccountingStorageTRES names them, as GPU
# clusters' slurm.conf does.)
accounting_hook() {
  local install=$work/tool/install.sh dir=$work/cluster
  sed -i "s#^AccountingStorageType=accounting_storage/none\$#AccountingStorageType=accounting_storage/slurmdbd\\nAccountingStorageHost=127.0.0.1\\nAccountingStoragePort=$golden_dbd_port\\nAccountingStoragePass=$dir/munge/munge.socket.2\\nAccountingStorageTRES=gres/gpu#" "$install"
  # shellcheck disable=SC2016 # the hook's name is install.sh's to expand
  sed -i 's#^sb_log "starting slurmctld#"$SLURM_GOLDEN_HOOK"\n&#' "$install"
  # shellcheck disable=SC2016
  if ! grep -q 'AccountingStoragePort=' "$install" || ! grep -q '^"$SLURM_GOLDEN_HOOK"$' "$install"; then
    echo "slurm-golden: install.sh changed; the accounting edits no longer apply" >&2
    exit 1
  fi
  export SLURM_GOLDEN_HOOK=$work/accounting-hook.sh
  cat >"$SLURM_GOLDEN_HOOK" <<HOOK
#!/usr/bin/env bash
set -euo pipefail
cat >"$dir/etc/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket.2
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$golden_dbd_port
SlurmUser=root
DebugLevel=info
LogFile=$work/slurmdbd.log
PidFile=$work/slurmdbd.daemon.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$golden_db_port
StorageUser=slurm
StoragePass=golden
StorageLoc=slurm_acct_db
CONF
chmod 600 "$dir/etc/slurmdbd.conf"
# Its own session, its PID recorded (the shell's, which execs slurmdbd).
setsid bash -c 'echo \$\$ >"\$0"; exec slurmdbd -D' "$work/slurmdbd.pid" \
  >>"$work/slurmdbd.out" 2>&1 </dev/null &
for _ in \$(seq 100); do
  sacctmgr -n show cluster >/dev/null 2>&1 && break
  sleep 0.2
done
sacctmgr -i add cluster benchcl >/dev/null
sacctmgr -i add account research Description=golden Organization=golden >/dev/null
sacctmgr -i add user root Account=research DefaultAccount=research >/dev/null
HOOK
  chmod +x "$SLURM_GOLDEN_HOOK"
}

accounting_stop() {
  local pid
  for pid in "$(cat "$work/slurmdbd.pid" 2>/dev/null)" "$db_pid"; do
    if [ -z "$pid" ] || [ ! -d "/proc/$pid" ]; then continue; fi
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 100); do
      [ -d "/proc/$pid" ] || break
      sleep 0.1
    done
    [ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null
  done
  return 0
}

# sacct's output for the jobs states.txt has (running, pending on
# resources, held, an array waiting; completed, failed, signalled,
# cancelled, timed out) and two with steps, in its forms: default,
# --format with issue 29's fields, -X, -P, -n, widths; and into
# $2, squeue's and scontrol's view of the running and waiting ones (an
# array waiting on its %N among them).
record_sacct() {
  local golden=$1 queue_golden=$2 fields=JobID,JobIDRaw,JobName,State,ExitCode,Elapsed,Submit,Start,End,AllocTRES,NodeList,Account,Partition
  local fill waits held array live ok fails killed cancelled timeout steps gpus ended all
  cd "$work" || exit 1
  fill=$(sbatch --parsable --job-name=fill -N 4 --gpus-per-node=8 --wrap 'srun true; sleep 12')
  sleep 2
  waits=$(sbatch --parsable --job-name=waits -N 1 --gpus-per-node=8 --wrap 'true')
  held=$(sbatch --parsable --job-name=held --hold --wrap 'true')
  array=$(sbatch --parsable --job-name=array --array=0-3%2 --wrap 'sleep 1')
  live="$fill,$waits,$held,$array"
  # slurmctld sends pending jobs to slurmdbd on its own time; one cancelled
  # before it did shows Start as its end, not None.
  for _ in $(seq 60); do
    [ "$(sacct -X -n -P -o JobID -j "$live" | wc -l)" -ge 4 ] && break
    sleep 1
  done
  sleep 1
  {
    echo "== sacct -j (running, pending on resources, held, array pending)"
    sacct -j "$live"
    echo "== sacct -X -o $fields (same jobs)"
    sacct -X -j "$live" -o "$fields"
    echo "== sacct -X -P -n -o $fields (same jobs)"
    sacct -X -P -n -j "$live" -o "$fields"
    echo "== sacct -o $fields (same jobs, steps included)"
    sacct -j "$live" -o "$fields"
  } >"$work/sacct-live.txt"
  # squeue and scontrol for the same jobs: how a waiting array shows.
  {
    echo "== squeue"
    squeue -j "$live"
    echo "== squeue -r"
    squeue -r -j "$live"
    echo "== squeue -h -o '%i|%A|%F|%K|%T|%r'"
    squeue -h -j "$live" -o '%i|%A|%F|%K|%T|%r'
    echo "== squeue -h -r -o '%i|%A|%F|%K|%T|%r'"
    squeue -h -r -j "$live" -o '%i|%A|%F|%K|%T|%r'
    echo "== scontrol show job -o (the array)"
    scontrol show job -o "$array" | tr ' ' '\n' |
      grep -E '^(JobId|ArrayJobId|ArrayTaskId|ArrayTaskThrottle|JobName|JobState|Reason)='
  } >"$work/queue.txt"
  scancel "$waits" "$held"

  ok=$(sbatch --parsable --job-name=ok --wrap 'true')
  fails=$(sbatch --parsable --job-name=fails --wrap 'exit 3')
  killed=$(sbatch --parsable --job-name=killed --wrap 'kill -9 $$')
  cancelled=$(sbatch --parsable --job-name=cancelled --wrap 'sleep 60')
  timeout=$(sbatch --parsable --job-name=timeout -t 1 --wrap 'sleep 300')
  steps=$(sbatch --parsable --job-name=steps -N 2 -n 2 --wrap 'srun true; srun sh -c "exit 2"; true')
  gpus=$(sbatch --parsable --job-name=gpus -n 2 --gpus-per-task=1 --mem=8G --wrap 'srun true')
  for _ in $(seq 60); do
    [ "$(squeue -h -j "$cancelled" -o %T 2>/dev/null)" = RUNNING ] && break
    sleep 1
  done
  sleep 2
  scancel "$cancelled"
  ended="$array,$ok,$fails,$killed,$cancelled,$timeout,$steps,$gpus"
  all="$fill,$waits,$held,$ended"
  for _ in $(seq 200); do
    [ -z "$(squeue -h -j "$all" -o %T 2>/dev/null)" ] && break
    sleep 1
  done
  sleep 3 # slurmctld sends the ends to slurmdbd on its own time
  {
    cat "$work/sacct-live.txt"
    echo "== sacct -j (all ended)"
    sacct -j "$all"
    echo "== sacct -o $fields (all ended, steps included)"
    sacct -j "$all" -o "$fields"
    echo "== sacct -X -o $fields (all ended)"
    sacct -X -j "$all" -o "$fields"
    echo "== sacct -X -P -o $fields (all ended)"
    sacct -X -P -j "$all" -o "$fields"
    echo "== sacct -P -n -o $fields (all ended, steps included)"
    sacct -P -n -j "$all" -o "$fields"
    echo "== sacct -X -p -o JobID,State,ExitCode (all ended)"
    sacct -X -p -j "$all" -o JobID,State,ExitCode
    echo "== sacct -X -n -o JobID,State,ExitCode (all ended)"
    sacct -X -n -j "$all" -o JobID,State,ExitCode
    echo "== sacct -X -o JobID%-6,JobName%4,State%-16,AllocTRES%50 (all ended)"
    sacct -X -j "$all" -o JobID%-6,JobName%4,State%-16,AllocTRES%50
    echo "== sacct -X -o JobID%8,JobIDRaw%-14,State%6 (all ended)"
    sacct -X -j "$all" -o JobID%8,JobIDRaw%-14,State%6
    echo "== sacct -X -b (all ended)"
    sacct -X -b -j "$all"
  } >"$work/sacct.txt"
  # Ids (two digits from FirstJobId=70, as wide as "ID"), times and
  # durations (as wide as what they replace) vary from run to run.
  # Array elements take their ids when they start, after later jobs': all
  # two-digit ids from the first are this run's.
  local pattern
  pattern=$(seq -s '|' "$fill" 99)
  sed -E -e "s/\\b($pattern)\\b/ID/g" -e "s/\\b($pattern)_/ID_/g" \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}/YYYY-MM-DDThh:mm:ss/g' \
    -e 's/\b[0-9]{2}:[0-9]{2}:[0-9]{2}\b/hh:mm:ss/g' -e 's/[ ]+$//' "$work/sacct.txt" >"$golden"
  sed -E -e "s/\\b($pattern)\\b/ID/g" -e "s/\\b($pattern)_/ID_/g" \
    -e 's/\b[0-9]+:[0-9]{2}\b/m:ss/g' -e 's/[ ]+$//' "$work/queue.txt" >"$queue_golden"
}
