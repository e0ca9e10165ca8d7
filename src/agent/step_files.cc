#include "agent/step_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "agent/task_dir.h"

namespace berth::agent {

using nlohmann::json;

namespace {

// "<step>.<rank><suffix>" back to its name; nullopt for anything else.
std::optional<StepTaskName> ParseName(const std::string& file, const std::string& suffix) {
  if (file.size() <= suffix.size() || !file.ends_with(suffix)) return std::nullopt;
  const std::string base = file.substr(0, file.size() - suffix.size());
  const size_t dot = base.find('.');
  if (dot == std::string::npos) return std::nullopt;
  StepTaskName name;
  const auto read = [](const std::string& text, int32_t& out) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return !text.empty() && error == std::errc() && end == text.data() + text.size() && out >= 0;
  };
  if (!read(base.substr(0, dot), name.step) || !read(base.substr(dot + 1), name.rank)) {
    return std::nullopt;
  }
  return name;
}

}  // namespace

std::string StepTaskName::Base() const { return std::to_string(step) + "." + std::to_string(rank); }

std::string StepsDir(const std::string& task_dir) { return task_dir + "/steps"; }

std::string StepFile(const std::string& task_dir, const StepTaskName& name,
                     const std::string& suffix) {
  return StepsDir(task_dir) + "/" + name.Base() + suffix;
}

Status DeliverStepTask(const std::string& task_dir, const StepRequestFile& launch, bool cancel) {
  const StepTaskName& name = launch.name;
  const std::string dir = StepsDir(task_dir);
  if (::mkdir(dir.c_str(), 0711) != 0 && errno != EEXIST) {
    return Unavailable("cannot create " + dir + ": " + std::strerror(errno));
  }
  const std::string request = StepFile(task_dir, name, ".json");
  if (!FileExists(request)) {
    const json body{{"command", launch.command}, {"env", launch.env}};
    BERTH_RETURN_IF_ERROR(WriteFileAtomic(request, body.dump()));
  }
  const std::string cancel_file = StepFile(task_dir, name, ".cancel");
  if (cancel && !FileExists(cancel_file)) BERTH_RETURN_IF_ERROR(WriteFileAtomic(cancel_file, ""));
  return Status::Ok();
}

std::vector<StepTaskName> ListStepFiles(const std::string& task_dir, const std::string& suffix) {
  std::vector<StepTaskName> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(StepsDir(task_dir), error)) {
    if (std::optional<StepTaskName> name = ParseName(entry.path().filename().string(), suffix)) {
      names.push_back(*name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<StepRequestFile> ReadStepRequest(const std::string& task_dir, const StepTaskName& name) {
  BERTH_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(StepFile(task_dir, name, ".json")));
  const json body = json::parse(text, nullptr, false);
  StepRequestFile request{name, {}, {}};
  try {
    request.command = body.at("command").get<std::vector<std::string>>();
    request.env = body.at("env").get<std::map<std::string, std::string>>();
  } catch (const json::exception& e) {
    return InvalidArgument("step " + name.Base() + ": a bad request file: " + e.what());
  }
  if (request.command.empty()) return InvalidArgument("step " + name.Base() + ": no command");
  return request;
}

Status WriteStepExit(const std::string& task_dir, const StepTaskExit& exit) {
  json body = json::object();
  if (exit.exit_code) body["exit_code"] = *exit.exit_code;
  if (exit.signal) body["signal"] = *exit.signal;
  return WriteFileAtomic(StepFile(task_dir, exit.name, ".exit"), body.dump());
}

std::vector<StepTaskExit> ReadStepExits(const std::string& task_dir) {
  std::vector<StepTaskExit> exits;
  for (const StepTaskName& name : ListStepFiles(task_dir, ".exit")) {
    Result<std::string> text = ReadWholeFile(StepFile(task_dir, name, ".exit"));
    if (!text.ok()) continue;
    const json body = json::parse(*text, nullptr, false);
    if (!body.is_object()) continue;
    StepTaskExit exit{name, std::nullopt, std::nullopt};
    if (body.contains("exit_code") && body["exit_code"].is_number_integer()) {
      exit.exit_code = body["exit_code"].get<int32_t>();
    }
    if (body.contains("signal") && body["signal"].is_number_integer()) {
      exit.signal = body["signal"].get<int32_t>();
    }
    if (exit.exit_code || exit.signal) exits.push_back(exit);
  }
  return exits;
}

}  // namespace berth::agent
