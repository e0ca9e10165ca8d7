#include "cli/slurm/exported_env.h"

#include <algorithm>
#include <array>

extern char** environ;

namespace berth::cli::slurm {
namespace {

// What every task gets of its own, never from the submitting shell: its
// node's, job's and step's (GPUs, ranks, Berth's and Slurm's variables),
// and its user's (HOME, USER...: the node sets them from the job user's
// account, which need not be the shell's, a token being whose it is).
// Names ending in '_' are prefixes.
constexpr std::array<std::string_view, 18> kOwn = {"SLURM_",
                                                   "BERTH_",
                                                   "CUDA_VISIBLE_DEVICES",
                                                   "NVIDIA_VISIBLE_DEVICES",
                                                   "MASTER_",
                                                   "RANK",
                                                   "WORLD_SIZE",
                                                   "LOCAL_",
                                                   "NODE_RANK",
                                                   "GROUP_RANK",
                                                   "PWD",
                                                   "OLDPWD",
                                                   "SHLVL",
                                                   "_",
                                                   "HOME",
                                                   "USER",
                                                   "LOGNAME",
                                                   "SHELL"};

bool Own(std::string_view name) {
  return std::any_of(kOwn.begin(), kOwn.end(), [&](std::string_view own) {
    return own.size() > 1 && own.ends_with('_') ? name.starts_with(own) : name == own;
  });
}

bool ValidName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// "A,B='x,y',C" -> A, B='x,y', C: commas inside quotes stay.
std::vector<std::string> Words(std::string_view spec) {
  std::vector<std::string> words(1);
  char quote = 0;
  for (char c : spec) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ',') {
      words.emplace_back();
      continue;
    }
    words.back() += c;
  }
  return words;
}

std::string Unquoted(std::string value) {
  if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') &&
      value.back() == value.front()) {
    return value.substr(1, value.size() - 2);
  }
  return value;
}

}  // namespace

Environment InheritableEnvironment(const std::vector<std::string>& entries, size_t max_value,
                                   std::vector<std::string>& warnings) {
  Environment out;
  for (const std::string& entry : entries) {
    const size_t equals = entry.find('=');
    if (equals == std::string::npos) continue;
    const std::string name = entry.substr(0, equals);
    if (Own(name)) continue;
    if (!ValidName(name)) {
      warnings.push_back("the environment variable '" + name +
                         "' is not exported: Berth carries names of letters, digits and _ only");
      continue;
    }
    if (entry.size() - equals - 1 > max_value) {
      warnings.push_back("the environment variable '" + name + "' is not exported: its " +
                         std::to_string(entry.size() - equals - 1) + " bytes exceed Berth's " +
                         std::to_string(max_value));
      continue;
    }
    out[name] = entry.substr(equals + 1);
  }
  return out;
}

Environment InheritableShellEnvironment(std::vector<std::string>& warnings) {
  std::vector<std::string> entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    entries.emplace_back(*entry);
  }
  return InheritableEnvironment(entries, kMaxEnvValue, warnings);
}

Result<Environment> ExportedEnvironment(std::string_view spec, const Environment& inheritable) {
  if (spec.empty()) return inheritable;  // ALL, the default
  Environment out;
  for (const std::string& word : Words(spec)) {
    const size_t equals = word.find('=');
    const std::string name = word.substr(0, equals);
    if (equals == std::string::npos && (name == "ALL" || name == "all")) {
      for (const auto& [key, value] : inheritable) out[key] = value;
      continue;
    }
    if (equals == std::string::npos && (name == "NONE" || name == "none" || name == "NIL")) {
      continue;
    }
    if (!ValidName(name)) {
      return InvalidArgument("--export: '" + word +
                             "' is not ALL, NONE, NAME or NAME=VALUE (names of letters, digits "
                             "and _)");
    }
    if (Own(name)) continue;  // each task's own, as from the shell
    if (equals != std::string::npos) {
      out[name] = Unquoted(word.substr(equals + 1));
    } else if (auto found = inheritable.find(name); found != inheritable.end()) {
      out[name] = found->second;
    }
  }
  return out;
}

}  // namespace berth::cli::slurm
