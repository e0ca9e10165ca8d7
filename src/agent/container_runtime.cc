#include "agent/container_runtime.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "agent/run_command.h"
#include "agent/task_env.h"

namespace berth::agent {
namespace {

using nlohmann::json;

constexpr auto kInfoTimeout = std::chrono::seconds(30);
constexpr auto kCleanupTimeout = std::chrono::seconds(60);
// Where the job's script is inside its container.
constexpr char kScriptInContainer[] = "/berth/script";

// A string at a JSON pointer, or "" (info formats vary between versions).
std::string At(const json& body, const char* pointer) {
  const json::json_pointer path(pointer);
  if (!body.contains(path)) return "";
  const json& value = body.at(path);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) return value.dump();
  return "";
}

std::optional<uint64_t> HardLimit(int resource) {
  rlimit limit{};
  if (::getrlimit(resource, &limit) != 0 || limit.rlim_max == RLIM_INFINITY) return std::nullopt;
  return static_cast<uint64_t>(limit.rlim_max);
}

uint64_t ReadNumber(const char* path, uint64_t fallback) {
  std::ifstream in(path);
  uint64_t value = 0;
  return in >> value ? value : fallback;
}

std::string FindRunc() {
  for (const char* path :
       {"/usr/sbin/runc", "/usr/bin/runc", "/usr/local/bin/runc", "/usr/local/sbin/runc"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return "";
}

// "--ulimit nofile=N:N": at most the agent's own hard limit and the
// kernel's; none when neither bounds it.
void AddUlimit(std::vector<std::string>& args, const char* name, std::optional<uint64_t> own,
               uint64_t kernel) {
  const uint64_t limit = own ? std::min(*own, kernel) : kernel;
  args.push_back("--ulimit");
  args.push_back(std::string(name) + "=" + std::to_string(limit) + ":" + std::to_string(limit));
}

std::string Hash8(const std::string& text) {
  char out[9];
  std::snprintf(out, sizeof out, "%08x",
                static_cast<unsigned>(std::hash<std::string>{}(text)&0xffffffffu));
  return out;
}

// Names may hold [a-zA-Z0-9_.-]; a node name is close to that already.
std::string NameSafe(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    out += ok ? c : '_';
  }
  return out;
}

void Mount(std::vector<std::string>& argv, const std::string& source, const std::string& target,
           bool read_only) {
  argv.push_back("--mount");
  argv.push_back("type=bind,source=" + source + ",target=" + target + (read_only ? ",ro" : ""));
}

}  // namespace

std::string_view RuntimeKindName(RuntimeKind kind) {
  return kind == RuntimeKind::kDocker ? "docker" : "podman";
}

Result<ContainerRuntime> RuntimeFromFacts(const ContainerRuntimeOptions& options,
                                          const RuntimeHostFacts& facts) {
  if (!options.kind) return FailedPrecondition("containers are off");
  const json info = json::parse(facts.info_json, nullptr, false);
  if (!info.is_object()) {
    return InvalidArgument(std::string(RuntimeKindName(*options.kind)) + " info: not JSON");
  }
  ContainerRuntime runtime;
  runtime.kind = *options.kind;
  runtime.shm_size = options.shm_size;
  runtime.default_pull = options.default_pull;
  runtime.command.push_back(options.binary.empty() ? std::string(RuntimeKindName(runtime.kind))
                                                   : options.binary);
  std::string version;
  std::string oci;
  std::string manager;
  std::string cgroup_version;
  if (runtime.kind == RuntimeKind::kPodman) {
    version = At(info, "/version/Version");
    oci = At(info, "/host/ociRuntime/name");
    manager = At(info, "/host/cgroupManager");
    cgroup_version = At(info, "/host/cgroupVersion");  // "v1" / "v2"
    if (cgroup_version == "v1" && oci == "crun" && !facts.runc_path.empty()) {
      runtime.command.insert(runtime.command.end(), {"--runtime", facts.runc_path});
      oci = "runc";
    }
    if (manager == "systemd" && !facts.systemd_running) {
      runtime.command.push_back("--cgroup-manager=cgroupfs");
      manager = "cgroupfs";
    }
  } else {
    version = At(info, "/ServerVersion");
    oci = At(info, "/DefaultRuntime");
    manager = At(info, "/CgroupDriver");
    const std::string number = At(info, "/CgroupVersion");  // "1" / "2"
    cgroup_version = number.empty() ? "" : "v" + number;
  }
  runtime.command.insert(runtime.command.end(), options.extra_args.begin(),
                         options.extra_args.end());
  AddUlimit(runtime.run_args, "nofile", facts.nofile_hard, facts.nr_open);
  AddUlimit(runtime.run_args, "nproc", facts.nproc_hard, facts.pid_max);
  runtime.description = std::string(RuntimeKindName(runtime.kind)) + " " +
                        (version.empty() ? "?" : version) + " (" + (oci.empty() ? "?" : oci) +
                        ", " + (manager.empty() ? "?" : manager) + ", cgroup " +
                        (cgroup_version.empty() ? "?" : cgroup_version) + ")";
  return runtime;
}

Result<ContainerRuntime> DetectContainerRuntime(const ContainerRuntimeOptions& options) {
  if (!options.kind) return FailedPrecondition("containers are off (--container-runtime off)");
  std::vector<std::string> argv{options.binary.empty() ? std::string(RuntimeKindName(*options.kind))
                                                       : options.binary};
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  if (*options.kind == RuntimeKind::kPodman) {
    argv.insert(argv.end(), {"info", "--format", "json"});
  } else {
    argv.insert(argv.end(), {"info", "--format", "{{json .}}"});
  }
  const CommandResult info = RunCommand(argv, kInfoTimeout);
  if (info.exit_code != 0) {
    return Unavailable(argv[0] + " info failed: " + LastLine(info.output));
  }
  RuntimeHostFacts facts;
  facts.info_json = info.output;
  facts.systemd_running = ::access("/run/systemd/system", F_OK) == 0;
  facts.runc_path = FindRunc();
  facts.nofile_hard = HardLimit(RLIMIT_NOFILE);
  facts.nproc_hard = HardLimit(RLIMIT_NPROC);
  facts.nr_open = ReadNumber("/proc/sys/fs/nr_open", facts.nr_open);
  facts.pid_max = ReadNumber("/proc/sys/kernel/pid_max", facts.pid_max);
  return RuntimeFromFacts(options, facts);
}

std::string ContainerName(const ContainerTask& task) {
  return "berth-" + NameSafe(task.node) + "-" + task.key.DirName() + "-" + Hash8(task.state_dir);
}

std::map<std::string, std::string> ContainerLabels(const ContainerTask& task) {
  return {{"berth.job", std::to_string(core::Value(task.key.job))},
          {"berth.task", std::to_string(task.key.task)},
          {"berth.attempt", std::to_string(task.key.attempt)},
          {"berth.node", task.node},
          {"berth.state", Hash8(task.state_dir)}};
}

std::map<std::string, std::string> ContainerEnvironment(
    const std::map<std::string, std::string>& task_env, const protocol::Container& container,
    const ContainerTask& task) {
  static const char* const kHostOnly[] = {"PATH", "HOME",   "SHELL",          "LANG",
                                          "TZ",   "TMPDIR", "LD_LIBRARY_PATH"};
  std::map<std::string, std::string> env = task_env;
  for (const char* name : kHostOnly) env.erase(name);
  std::erase_if(env, [](const auto& entry) { return entry.first.starts_with("LC_"); });
  for (const auto& [name, value] : container.env) env[name] = value;
  if (task.cdi_gpus) {
    std::vector<int32_t> renumbered;
    for (size_t i = 0; i < task.gpus.size(); ++i) renumbered.push_back(static_cast<int32_t>(i));
    env["CUDA_VISIBLE_DEVICES"] = JoinIndices(renumbered);
    env.erase("NVIDIA_VISIBLE_DEVICES");  // CDI gives the devices, not the NVIDIA hook
  }
  return env;
}

EnvFile ContainerEnvFile(const std::map<std::string, std::string>& env) {
  EnvFile file;
  for (const auto& [name, value] : env) {
    if (value.find('\n') != std::string::npos || value.find('\r') != std::string::npos) {
      file.argv_env.push_back(name + "=" + value);
    } else {
      file.text += name + "=" + value + "\n";
    }
  }
  return file;
}

std::vector<std::string> ContainerRunArgv(const ContainerRuntime& runtime,
                                          const protocol::TaskLaunch& launch,
                                          const ContainerTask& task) {
  const protocol::Container& container = *launch.container;
  std::vector<std::string> argv = runtime.command;
  argv.push_back("run");
  argv.insert(argv.end(), {"--name", ContainerName(task)});
  for (const auto& [key, value] : ContainerLabels(task)) {
    argv.insert(argv.end(), {"--label", key + "=" + value});
  }
  argv.insert(argv.end(), {"--user", std::to_string(task.uid) + ":" + std::to_string(task.gid)});
  for (uint32_t group : task.groups) {
    if (group != task.gid) argv.insert(argv.end(), {"--group-add", std::to_string(group)});
  }
  // The image was made ready by the supervisor (pull policy): never again.
  argv.insert(argv.end(), {"--pull", "never"});
  argv.insert(argv.end(), {"--network", "host", "--shm-size", runtime.shm_size});
  argv.insert(argv.end(), runtime.run_args.begin(), runtime.run_args.end());
  if (launch.limits.memory.value() > 0) {
    argv.insert(argv.end(), {"--memory", std::to_string(launch.limits.memory.value()) + "m"});
  }
  if (launch.limits.cpu.value() > 0) {
    const int64_t milli = launch.limits.cpu.value();
    char cpus[32];
    std::snprintf(cpus, sizeof cpus, "%lld.%03lld", static_cast<long long>(milli / 1000),
                  static_cast<long long>(milli % 1000));
    argv.insert(argv.end(), {"--cpus", cpus});
  }
  if (task.pids_max > 0) argv.insert(argv.end(), {"--pids-limit", std::to_string(task.pids_max)});
  if (task.cdi_gpus) {
    for (int32_t gpu : task.gpus) {
      argv.insert(argv.end(), {"--device", "nvidia.com/gpu=" + std::to_string(gpu)});
    }
  }
  if (!task.env_file.empty()) argv.insert(argv.end(), {"--env-file", task.env_file});
  for (const protocol::Mount& mount : container.mounts) {
    Mount(argv, mount.source, mount.target, mount.read_only);
  }
  if (!launch.workdir.empty()) Mount(argv, launch.workdir, launch.workdir, false);
  if (!task.scratch_dir.empty()) Mount(argv, task.scratch_dir, task.scratch_dir, false);
  if (!task.script_path.empty()) Mount(argv, task.script_path, kScriptInContainer, true);
  const std::string workdir = !container.workdir.empty() ? container.workdir : launch.workdir;
  if (!workdir.empty()) argv.insert(argv.end(), {"--workdir", workdir});
  if (!container.entrypoint.empty()) {
    argv.insert(argv.end(), {"--entrypoint", container.entrypoint.front()});
  }
  argv.push_back(container.image);
  if (!container.entrypoint.empty()) {
    argv.insert(argv.end(), container.entrypoint.begin() + 1, container.entrypoint.end());
  }
  if (!launch.script.empty()) {
    if (launch.script.starts_with("#!")) {
      argv.push_back(kScriptInContainer);
    } else {
      argv.insert(argv.end(), {"/bin/sh", kScriptInContainer});
    }
  } else {
    argv.insert(argv.end(), launch.command.begin(), launch.command.end());
  }
  return argv;
}

ContainerSpec ContainerSpecFor(const ContainerRuntime& runtime, const protocol::TaskLaunch& launch,
                               const ContainerTask& task) {
  ContainerSpec spec;
  spec.name = ContainerName(task);
  spec.runtime = runtime.command;
  spec.kind = std::string(RuntimeKindName(runtime.kind));
  spec.image = launch.container->image;
  spec.pull =
      std::string(protocol::ImagePullName(launch.container->pull.value_or(runtime.default_pull)));
  spec.memory_mib = launch.limits.memory.value();
  return spec;
}

std::vector<std::string> RemoveLeftoverContainers(const ContainerRuntime& runtime,
                                                  const std::string& state_dir,
                                                  const std::vector<std::string>& keep) {
  std::vector<std::string> argv = runtime.command;
  argv.insert(argv.end(), {"ps", "--all", "--filter", "label=berth.state=" + Hash8(state_dir),
                           "--format", "{{.Names}}"});
  const CommandResult listed = RunCommand(argv, kCleanupTimeout);
  std::vector<std::string> removed;
  if (listed.exit_code != 0) return removed;
  size_t start = 0;
  while (start < listed.output.size()) {
    const size_t end = std::min(listed.output.find('\n', start), listed.output.size());
    const std::string name = listed.output.substr(start, end - start);
    start = end + 1;
    if (name.empty() || std::find(keep.begin(), keep.end(), name) != keep.end()) continue;
    std::vector<std::string> remove = runtime.command;
    remove.insert(remove.end(), {"rm", "--force", name});
    if (RunCommand(remove, kCleanupTimeout).exit_code == 0) removed.push_back(name);
  }
  return removed;
}

}  // namespace berth::agent
