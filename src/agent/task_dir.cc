#include "agent/task_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace berth::agent {

using nlohmann::json;

namespace {

json CgroupJson(const TaskCgroup& cgroup) {
  json denied = json::array();
  for (const DeviceNumber& device : cgroup.denied_devices) {
    denied.push_back({device.major, device.minor});
  }
  return json{{"version", cgroup.version == CgroupVersion::kV1 ? 1 : 2},
              {"dirs", cgroup.dirs},
              {"memory_mib", cgroup.memory_mib},
              {"cpu_milli", cgroup.cpu_milli},
              {"pids_max", cgroup.pids_max},
              {"denied_devices", denied}};
}

// Throws json::exception on a malformed entry (the caller turns it into a
// Status).
TaskCgroup ParseCgroup(const json& body) {
  TaskCgroup cgroup;
  cgroup.version = body.at("version").get<int>() == 1 ? CgroupVersion::kV1 : CgroupVersion::kV2;
  cgroup.dirs = body.at("dirs").get<std::map<std::string, std::string>>();
  cgroup.memory_mib = body.at("memory_mib").get<int64_t>();
  cgroup.cpu_milli = body.at("cpu_milli").get<int64_t>();
  cgroup.pids_max = body.at("pids_max").get<int64_t>();
  for (const json& device : body.at("denied_devices")) {
    cgroup.denied_devices.push_back(
        DeviceNumber{device.at(0).get<uint32_t>(), device.at(1).get<uint32_t>()});
  }
  return cgroup;
}

bool ParseInt(std::string_view text, int64_t& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

}  // namespace

std::string TaskKey::DirName() const {
  return std::to_string(core::Value(job)) + "-" + std::to_string(task) + "-" +
         std::to_string(attempt);
}

std::optional<TaskKey> TaskKey::FromDirName(const std::string& name) {
  const size_t first = name.find('-');
  const size_t second = first == std::string::npos ? first : name.find('-', first + 1);
  if (second == std::string::npos) return std::nullopt;
  int64_t job = 0;
  int64_t task = 0;
  int64_t attempt = 0;
  const std::string_view view(name);
  if (!ParseInt(view.substr(0, first), job) ||
      !ParseInt(view.substr(first + 1, second - first - 1), task) ||
      !ParseInt(view.substr(second + 1), attempt) || job < 1 || task < 0 || attempt < 0 ||
      task > INT32_MAX || attempt > INT32_MAX) {
    return std::nullopt;
  }
  return TaskKey{static_cast<core::JobId>(job), static_cast<int32_t>(task),
                 static_cast<int32_t>(attempt)};
}

std::string ToString(const TaskKey& key) {
  return "job " + std::to_string(core::Value(key.job)) + " task " + std::to_string(key.task) +
         " attempt " + std::to_string(key.attempt);
}

std::string TaskSpecJson(const TaskSpec& spec) {
  json out{{"job", core::Value(spec.key.job)},
           {"task", spec.key.task},
           {"attempt", spec.key.attempt},
           {"argv", spec.argv},
           {"env", spec.env},
           {"workdir", spec.workdir},
           {"grace_us", spec.grace.micros()},
           {"gpus", spec.gpus}};
  out["time_limit_us"] = spec.time_limit ? json(spec.time_limit->micros()) : json(nullptr);
  if (spec.early_signal) {
    out["early_signal"] = json{{"signal", spec.early_signal->signal},
                               {"before_us", spec.early_signal->before.micros()},
                               {"batch_only", spec.early_signal->batch_only}};
  }
  out["cgroup"] = spec.cgroup ? CgroupJson(*spec.cgroup) : json(nullptr);
  out["output_path"] = spec.output_path;
  out["error_path"] = spec.error_path;
  out["append_output"] = spec.append_output;
  out["lease_file"] = spec.lease_file;
  out["container"] =
      spec.container
          ? json{{"name", spec.container->name}, {"runtime", spec.container->runtime},
                 {"kind", spec.container->kind}, {"image", spec.container->image},
                 {"pull", spec.container->pull}, {"memory_mib", spec.container->memory_mib}}
          : json(nullptr);
  out["run_as"] = spec.run_as ? json{{"user", spec.run_as->user},
                                     {"uid", spec.run_as->uid},
                                     {"gid", spec.run_as->gid},
                                     {"groups", spec.run_as->groups}}
                              : json(nullptr);
  return out.dump(2) + "\n";
}

Result<TaskSpec> ParseTaskSpec(const std::string& text) {
  const json body = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return InvalidArgument("spec.json: not JSON");
  TaskSpec spec;
  try {
    spec.key.job = static_cast<core::JobId>(body.at("job").get<int64_t>());
    spec.key.task = body.at("task").get<int32_t>();
    spec.key.attempt = body.at("attempt").get<int32_t>();
    spec.argv = body.at("argv").get<std::vector<std::string>>();
    spec.env = body.at("env").get<std::vector<std::string>>();
    spec.workdir = body.at("workdir").get<std::string>();
    spec.grace = core::Duration::Micros(body.at("grace_us").get<int64_t>());
    spec.gpus = body.at("gpus").get<std::vector<int32_t>>();
    if (!body.at("time_limit_us").is_null()) {
      spec.time_limit = core::Duration::Micros(body.at("time_limit_us").get<int64_t>());
    }
    if (const auto early = body.find("early_signal"); early != body.end()) {
      spec.early_signal =
          EarlySignalSpec{early->at("signal").get<int>(),
                          core::Duration::Micros(early->at("before_us").get<int64_t>()),
                          early->at("batch_only").get<bool>()};
    }
    // Absent in specs written before cgroups.
    if (body.contains("cgroup") && !body.at("cgroup").is_null()) {
      spec.cgroup = ParseCgroup(body.at("cgroup"));
    }
    spec.output_path = body.value("output_path", std::string());
    spec.error_path = body.value("error_path", std::string());
    spec.append_output = body.value("append_output", false);
    spec.lease_file = body.value("lease_file", std::string());  // absent before leases
    if (const auto box = body.find("container"); box != body.end() && !box->is_null()) {
      spec.container = ContainerSpec{
          box->at("name").get<std::string>(), box->at("runtime").get<std::vector<std::string>>(),
          box->at("kind").get<std::string>(), box->at("image").get<std::string>(),
          box->at("pull").get<std::string>(), box->at("memory_mib").get<int64_t>()};
    }
    if (const auto run_as = body.find("run_as"); run_as != body.end() && !run_as->is_null()) {
      spec.run_as = TaskIdentity{
          run_as->at("user").get<std::string>(), run_as->at("uid").get<uint32_t>(),
          run_as->at("gid").get<uint32_t>(), run_as->at("groups").get<std::vector<uint32_t>>()};
    }
  } catch (const json::exception& error) {
    return InvalidArgument(std::string("spec.json: ") + error.what());
  }
  if (spec.argv.empty()) return InvalidArgument("spec.json: argv: empty");
  return spec;
}

std::string SignalsFileText(const std::vector<SignalLine>& lines) {
  std::string text;
  for (const SignalLine& line : lines) {
    text += std::to_string(line.id) + " " + std::to_string(line.signal) +
            (line.batch_only ? " batch\n" : " all\n");
  }
  return text;
}

std::vector<SignalLine> ParseSignalsFile(const std::string& text) {
  std::vector<SignalLine> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const size_t first = line.find(' ');
    const size_t second = first == std::string::npos ? first : line.find(' ', first + 1);
    if (second == std::string::npos) continue;
    int64_t id = 0;
    int64_t signal = 0;
    const std::string scope = line.substr(second + 1);
    if (!ParseInt(line.substr(0, first), id) ||
        !ParseInt(line.substr(first + 1, second - first - 1), signal) || id < 1 || signal < 1 ||
        signal > 64 || (scope != "batch" && scope != "all")) {
      continue;
    }
    lines.push_back(SignalLine{id, static_cast<int>(signal), scope == "batch"});
  }
  return lines;
}

std::string ExitStatusJson(const ExitStatus& status) {
  json out{{"reason", status.reason}, {"end_time_us", status.end_time.micros()}};
  if (!status.message.empty()) out["message"] = status.message;
  if (status.peak_memory_bytes) out["peak_memory_bytes"] = *status.peak_memory_bytes;
  if (status.cpu_time) out["cpu_time_us"] = status.cpu_time->micros();
  out["exit_code"] = status.exit_code ? json(*status.exit_code) : json(nullptr);
  out["signal"] = status.signal ? json(*status.signal) : json(nullptr);
  return out.dump() + "\n";
}

Result<ExitStatus> ParseExitStatus(const std::string& text) {
  const json body = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return InvalidArgument("exit.json: not JSON");
  ExitStatus status;
  try {
    status.reason = body.at("reason").get<std::string>();
    status.end_time = core::Time::FromMicros(body.at("end_time_us").get<int64_t>());
    status.message = body.value("message", std::string());
    if (body.contains("peak_memory_bytes")) {
      status.peak_memory_bytes = body.at("peak_memory_bytes").get<int64_t>();
    }
    if (body.contains("cpu_time_us")) {
      status.cpu_time = core::Duration::Micros(body.at("cpu_time_us").get<int64_t>());
    }
    if (!body.at("exit_code").is_null()) status.exit_code = body.at("exit_code").get<int32_t>();
    if (!body.at("signal").is_null()) status.signal = body.at("signal").get<int32_t>();
  } catch (const json::exception& error) {
    return InvalidArgument(std::string("exit.json: ") + error.what());
  }
  if (!status.exit_code && !status.signal) {
    return InvalidArgument("exit.json: neither exit_code nor signal");
  }
  return status;
}

Status WriteFileAtomic(const std::string& path, const std::string& content) {
  // A temporary of this writer's own: the agent and a task's supervisor
  // both write supervisor.pid, and with one shared name either could rename
  // the other's half-written file into place (or find it gone).
  static std::atomic<uint64_t> writes{0};
  const std::string temporary =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(writes++);
  // The agent's files are its own: spec.json holds the job's env.
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot write " + temporary + ": " + std::strerror(errno));
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      return Unavailable("cannot write " + temporary + ": " + std::strerror(error));
    }
    written += static_cast<size_t>(n);
  }
  // Durable before it is visible: an exit status must survive a power cut.
  ::fsync(fd);
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return Unavailable("cannot rename " + temporary + ": " + std::strerror(error));
  }
  return Status::Ok();
}

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool FileExists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::optional<std::string> LatestTaskDir(const std::string& tasks_dir, core::JobId job,
                                         int32_t task) {
  std::optional<TaskKey> best;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(tasks_dir, error)) {
    std::optional<TaskKey> key = TaskKey::FromDirName(entry.path().filename().string());
    if (!key || key->job != job || key->task != task) continue;
    if (!best || key->attempt > best->attempt) best = key;
  }
  if (!best) return std::nullopt;
  return tasks_dir + "/" + best->DirName();
}

}  // namespace berth::agent
