// berth-supervisor TASK_DIR: runs one task to its end (supervisor.h). The
// agent execs it for every task it starts; `berthd supervise-task TASK_DIR`
// does the same from the daemons' binary.
#include <cstdio>

#include "agent/supervisor.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: berth-supervisor TASK_DIR (started by berth agent)\n");
    return 2;
  }
  return berth::agent::RunSupervisor(argv[1]);
}
