// agent_test's main: GoogleTest, except when the task runner starts this
// binary as a supervisor (`agent_test supervise-task DIR`), as berth's CLI does.
#include <gtest/gtest.h>

#include <cstring>

#include "agent/supervisor.h"

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], berth::agent::kSuperviseCommand) == 0) {
    return berth::agent::RunSupervisor(argv[2]);
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
