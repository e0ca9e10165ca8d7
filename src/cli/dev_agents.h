// The agents of `berth dev --nodes N`: one `berth agent` child process per
// simulated node (node-1..node-N), each with fake GPUs, a state dir under
// the data dir and an agent token the dev server issues:
//
//   DATA/agents/node-1/token       the agent token (0600), passed by file
//   DATA/agents/node-1/agent.pid   written by the agent
//   DATA/agents/node-1/tasks/...   its tasks (agent state dir, see src/agent)
//
// `--feature ib` gives every node the feature ib and `--feature ib@node-2`
// node-2 alone ('@' is in no feature name), so jobs can try --constraint.
// They listen on 127.0.0.1 (a free port each), so 127.0.0.1 is the
// MASTER_ADDR of gangs. An agent that exits is reported, not restarted (a
// test may kill one on purpose). Stopping `berth dev` stops its agents by
// PID, and they stop their tasks (unless --keep-tasks); if `berth dev` itself
// dies, its agents get SIGTERM from the kernel (PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::cli {

// A feature of the simulated nodes: on every node, or on `node` alone.
struct DevFeature {
  std::string name;
  std::string node;  // empty: every node
};

// "NAME" or "NAME@node-K" (1 <= K <= nodes); the message names --feature.
Result<DevFeature> ParseDevFeature(const std::string& text, int nodes);

struct DevAgentsOptions {
  std::string server_url;  // http://127.0.0.1:PORT
  std::string data_dir;    // holds admin-token
  int nodes = 1;
  std::string fake_gpus;
  int fake_topology = 1;
  std::string heartbeat_interval = "1s";
  std::vector<DevFeature> features;
  // Stopping `berth dev` stops the tasks too (else they keep running, and
  // the next `berth dev` on the same data dir adopts them).
  bool stop_tasks_on_exit = true;
  bool allow_root_jobs = false;  // berth dev started by root: its jobs run as root
};

class DevAgents {
 public:
  // Issues the tokens and starts the agents.
  static Result<std::unique_ptr<DevAgents>> Start(const DevAgentsOptions& options);
  ~DevAgents();
  DevAgents(const DevAgents&) = delete;
  DevAgents& operator=(const DevAgents&) = delete;

  // Reaps agents that exited and says so on stderr (call on SIGCHLD).
  void Reap();
  // SIGTERM to every agent still running, by PID; SIGKILL after 15 s.
  void Stop();

 private:
  struct Child {
    std::string node;
    pid_t pid = 0;
    bool running = false;
  };
  DevAgents() = default;

  std::vector<Child> children_;
};

}  // namespace berth::cli
