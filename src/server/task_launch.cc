#include "server/task_launch.h"

namespace berth::server {

protocol::TaskLaunch TaskLaunchFor(const store::JobRecord& job) {
  const store::JobRequest& request = job.request;
  protocol::TaskLaunch launch;
  launch.name = request.name;
  launch.command = request.command;
  launch.script = request.script;
  launch.env = request.env;
  launch.workdir = request.workdir;
  launch.output = request.output;
  launch.error = request.error;
  launch.append_output = request.append_output;
  if (job.array_parent) launch.array_job = core::Value(*job.array_parent);
  launch.array_index = request.array_index;
  launch.time_limit = request.time_limit;
  launch.grace = request.grace;
  launch.run_as.user = job.user;
  launch.limits.cpu = request.task.cpu;
  launch.limits.memory = request.task.memory;
  if (request.container) {
    const store::ContainerRequest& wanted = *request.container;
    protocol::Container& container = launch.container.emplace();
    container.image = wanted.image;
    for (const store::ContainerMount& mount : wanted.mounts) {
      container.mounts.push_back({mount.source, mount.target, mount.read_only});
    }
    container.workdir = wanted.workdir;
    container.env = wanted.env;
    container.entrypoint = wanted.entrypoint;
    if (!wanted.pull.empty()) container.pull = protocol::ParseImagePull(wanted.pull);
  }
  return launch;
}

void HoldShareInstead(protocol::TaskLaunch& launch) {
  launch.command = {"sleep", "infinity"};
  launch.script.clear();
  launch.output.clear();
  launch.error.clear();
  launch.append_output = false;
}

}  // namespace berth::server
