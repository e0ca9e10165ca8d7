#include "cli/submit_options.h"

#include <charconv>
#include <cstdlib>

#include "cli/sbatch_options.h"
#include "cli/signal_option.h"
#include "cli/slurm/array_env.h"
#include "core/constraint.h"
#include "protocol/output_pattern.h"

namespace berth::cli {
namespace {

using nlohmann::json;

constexpr std::string_view kHostlist = "a hostlist such as gpu[01-04],gpu07";

std::optional<int64_t> Number(std::string_view text) {
  int64_t value = 0;
  if (text.empty()) return std::nullopt;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

Status Bad(std::string_view flag, std::string_view expected, std::string_view got) {
  return InvalidArgument(std::string(flag) + ": expected " + std::string(expected) + ", got '" +
                         std::string(got) + "'");
}

Result<int64_t> Count(std::string_view flag, std::string_view text, int64_t min) {
  std::optional<int64_t> value = Number(text);
  if (!value || *value < min) {
    return Bad(flag, "an integer >= " + std::to_string(min), text);
  }
  return *value;
}

// Splits a directive line into words; single and double quotes group.
std::vector<std::string> Words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

bool TakesValue(std::string_view flag) {
  return flag != "--preemptible" && flag != "--hold" && flag != "-H" && flag != "--requeue" &&
         flag != "--no-requeue" && flag != "--wait-for-nodes" && flag != "--gpus-in-one-group" &&
         flag != "--container-mount-home" && flag != "--no-container-mount-home" &&
         flag != "--exclusive";
}

// Slurm's --dependency: "afterok:1:2,afterany:3" (also "?" separated: any of;
// treated as all of, the stricter reading).
Status AddSlurmDependencies(std::string_view text, SubmitOptions& options) {
  for (std::string_view group : Split(text, text.find('?') != std::string_view::npos ? '?' : ',')) {
    if (group == "singleton") {  // names no job: the server finds its namesakes
      options.after.emplace_back(group);
      continue;
    }
    std::vector<std::string_view> parts = Split(group, ':');
    if (parts.size() < 2) return Bad("--dependency", "KIND:ID[:ID...] or singleton", group);
    for (size_t i = 1; i < parts.size(); ++i) {
      options.after.push_back(std::string(parts[0]) + ":" + std::string(parts[i]));
    }
  }
  return Status::Ok();
}

// Slurm's --gres: "gpu:4" or "gpu:a100:4" (several resources comma-separated),
// GPUs per node.
Result<bool> ApplyGres(std::string_view text, SubmitOptions& options) {
  bool used = false;
  for (std::string_view resource : Split(text, ',')) {
    std::vector<std::string_view> parts = Split(resource, ':');
    if (parts.empty() || parts[0] != "gpu") continue;
    slurm::SlurmResourceOptions wanted = options.slurm.value_or(slurm::SlurmResourceOptions{});
    if (parts.size() == 2) {
      BERTH_ASSIGN_OR_RETURN(wanted.gres_gpus, Count("--gres", parts[1], 0));
    } else if (parts.size() == 3) {
      options.gpu_type = std::string(parts[1]);
      BERTH_ASSIGN_OR_RETURN(wanted.gres_gpus, Count("--gres", parts[2], 0));
    } else {
      return Bad("--gres", "gpu:N or gpu:TYPE:N", resource);
    }
    options.slurm = wanted;
    used = true;
  }
  return used;
}

// Pyxis's flags, the same under #SBATCH, #BERTH and on the command line.
bool ApplyContainer(std::string_view flag, std::string_view value, SubmitOptions& options) {
  if (flag == "--container-image") return options.container_image = std::string(value), true;
  if (flag == "--container-mounts") return options.container_mounts = std::string(value), true;
  if (flag == "--container-workdir") return options.container_workdir = std::string(value), true;
  if (flag == "--container-pull") return options.container_pull = std::string(value), true;
  if (flag == "--container-mount-home") return options.container_mount_home = true, true;
  if (flag == "--no-container-mount-home") return options.container_mount_home = false, true;
  return false;
}

// "/data:/data:ro,/scratch:/tmp/s": Pyxis's --container-mounts. A bare
// "/data" mounts the path at the same place.
Result<json> ContainerMounts(std::string_view text) {
  const std::string_view flag = "--container-mounts";
  json mounts = json::array();
  for (std::string_view item : Split(text, ',')) {
    std::vector<std::string_view> parts = Split(item, ':');
    if (parts.size() > 3 || parts[0].empty() || (parts.size() >= 2 && parts[1].empty())) {
      return Bad(flag, "SRC[:DST[:ro|rw]],...", item);
    }
    bool read_only = false;
    if (parts.size() == 3) {
      if (parts[2] != "ro" && parts[2] != "rw") return Bad(flag, "SRC:DST:ro or SRC:DST:rw", item);
      read_only = parts[2] == "ro";
    }
    mounts.push_back({{"source", std::string(parts[0])},
                      {"target", std::string(parts.size() >= 2 ? parts[1] : parts[0])},
                      {"read_only", read_only}});
  }
  return mounts;
}

// The `container` object, when an image is named; a container flag
// without one is an error naming it.
Result<std::optional<json>> ContainerBody(const SubmitOptions& options) {
  if (!options.container_image) {
    for (const auto& [flag, given] :
         {std::pair{"--container-mounts", options.container_mounts.has_value()},
          std::pair{"--container-workdir", options.container_workdir.has_value()},
          std::pair{"--container-pull", options.container_pull.has_value()},
          std::pair{"--container-mount-home", options.container_mount_home.value_or(false)}}) {
      if (given) return InvalidArgument(std::string(flag) + ": needs --container-image");
    }
    return std::optional<json>();
  }
  if (options.container_image->empty()) {
    return Bad("--container-image", "an image name", *options.container_image);
  }
  json container{{"image", *options.container_image}};
  if (options.container_mounts) {
    BERTH_ASSIGN_OR_RETURN(container["mounts"], ContainerMounts(*options.container_mounts));
  }
  if (options.container_workdir) container["workdir"] = *options.container_workdir;
  if (options.container_mount_home) container["mount_home"] = *options.container_mount_home;
  if (options.container_pull) {
    const std::string& pull = *options.container_pull;
    if (pull != "missing" && pull != "never" && pull != "always") {
      return Bad("--container-pull", "missing, never or always", pull);
    }
    container["pull"] = pull;
  }
  return std::optional<json>(std::move(container));
}

// "a100:4" or "4": a GPU count, with a model before it.
Result<int64_t> GpuCount(std::string_view flag, std::string_view value, SubmitOptions& options) {
  const size_t colon = value.rfind(':');
  if (colon != std::string_view::npos) options.gpu_type = std::string(value.substr(0, colon));
  return Count(flag, colon == std::string_view::npos ? value : value.substr(colon + 1), 0);
}

// Slurm's resource options, kept with their Slurm meanings (per job, per
// node, per task) for slurm::AllocateSlurmJob.
Result<bool> ApplySlurmResource(std::string_view flag, std::string_view value,
                                SubmitOptions& options) {
  slurm::SlurmResourceOptions wanted = options.slurm.value_or(slurm::SlurmResourceOptions{});
  if (flag == "--gpus" || flag == "-G") {
    BERTH_ASSIGN_OR_RETURN(wanted.gpus, GpuCount(flag, value, options));
  } else if (flag == "--gpus-per-node") {
    BERTH_ASSIGN_OR_RETURN(wanted.gpus_per_node, GpuCount(flag, value, options));
  } else if (flag == "--gpus-per-task") {
    BERTH_ASSIGN_OR_RETURN(wanted.gpus_per_task, GpuCount(flag, value, options));
  } else if (flag == "--nodes" || flag == "-N") {
    BERTH_ASSIGN_OR_RETURN(wanted.nodes, Count(flag, Split(value, '-')[0], 1));
  } else if (flag == "--ntasks" || flag == "-n") {
    BERTH_ASSIGN_OR_RETURN(wanted.ntasks, Count(flag, value, 1));
  } else if (flag == "--ntasks-per-node") {
    BERTH_ASSIGN_OR_RETURN(wanted.ntasks_per_node, Count(flag, value, 1));
  } else if (flag == "--cpus-per-task" || flag == "-c") {
    BERTH_ASSIGN_OR_RETURN(wanted.cpus_per_task, Count(flag, value, 1));
  } else if (flag == "--cpus-per-gpu") {
    BERTH_ASSIGN_OR_RETURN(wanted.cpus_per_gpu, Count(flag, value, 1));
  } else if (flag == "--mem") {
    BERTH_ASSIGN_OR_RETURN(wanted.mem_mib, ParseMemoryMiB(value, flag));
  } else if (flag == "--mem-per-cpu") {
    BERTH_ASSIGN_OR_RETURN(wanted.mem_per_cpu_mib, ParseMemoryMiB(value, flag));
  } else if (flag == "--mem-per-gpu") {
    BERTH_ASSIGN_OR_RETURN(wanted.mem_per_gpu_mib, ParseMemoryMiB(value, flag));
  } else if (flag == "--exclusive") {
    wanted.exclusive = true;
  } else {
    return false;
  }
  options.slurm = wanted;
  return true;
}

Result<bool> ApplySbatch(std::string_view flag, std::string_view value, SubmitOptions& options) {
  if (flag == "--gres") return ApplyGres(value, options);
  if (ApplyContainer(flag, value, options)) return true;
  BERTH_ASSIGN_OR_RETURN(bool resource, ApplySlurmResource(flag, value, options));
  if (resource) return true;
  if (flag == "--time" || flag == "-t") return options.time = std::string(value), true;
  if (flag == "--signal") return options.signal = std::string(value), true;
  if (flag == "--export") return options.export_env = std::string(value), true;
  if (flag == "--job-name" || flag == "-J") return options.name = std::string(value), true;
  if (flag == "--array" || flag == "-a") return options.array = std::string(value), true;
  if (flag == "--partition" || flag == "-p") return options.queue = std::string(value), true;
  if (flag == "--chdir" || flag == "-D") return options.workdir = std::string(value), true;
  if (flag == "--output" || flag == "-o") return options.output = std::string(value), true;
  if (flag == "--error" || flag == "-e") return options.error = std::string(value), true;
  if (flag == "--open-mode") return options.open_mode = std::string(value), true;
  if (flag == "--qos" || flag == "-q") return options.priority = std::string(value), true;
  if (flag == "--constraint" || flag == "-C") return options.constraint = std::string(value), true;
  if (flag == "--nodelist" || flag == "-w") return options.nodelist = std::string(value), true;
  if (flag == "--exclude" || flag == "-x") return options.exclude = std::string(value), true;
  if (flag == "--dependency" || flag == "-d") {
    BERTH_RETURN_IF_ERROR(AddSlurmDependencies(value, options));
    return true;
  }
  return false;
}

// The variables sbatch itself exports from the options it was given (so
// only those given), as a real sbatch sets them (tests/data/slurm/golden/).
json SlurmOptionEnv(const slurm::SlurmResourceOptions& options,
                    const slurm::SlurmAllocation& allocation) {
  json env = json::object();
  auto set = [&](const char* name, const std::optional<int64_t>& value) {
    if (value) env[name] = std::to_string(*value);
  };
  if (options.ntasks || options.ntasks_per_node) {
    env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = std::to_string(allocation.tasks());
  }
  set("SLURM_NTASKS_PER_NODE", options.ntasks_per_node);
  set("SLURM_CPUS_PER_TASK", options.cpus_per_task);
  set("SLURM_CPUS_PER_GPU", options.cpus_per_gpu);
  set("SLURM_GPUS", options.gpus);
  set("SLURM_GPUS_PER_NODE", options.gpus_per_node);
  set("SLURM_GPUS_PER_TASK", options.gpus_per_task);
  // --mem=0 (the whole node) sets none, as Slurm's sbatch.
  if (options.mem_mib != 0) set("SLURM_MEM_PER_NODE", options.mem_mib);
  set("SLURM_MEM_PER_CPU", options.mem_per_cpu_mib);
  set("SLURM_MEM_PER_GPU", options.mem_per_gpu_mib);
  return env;
}

// A Slurm job as Berth runs it: one task per node with that node's share,
// on distinct nodes, and the Slurm layout for its variables and steps.
Status AddSlurmShape(const slurm::SlurmResourceOptions& options,
                     const std::optional<slurm::NodeSize>& reference_node, json& body) {
  BERTH_ASSIGN_OR_RETURN(slurm::SlurmAllocation allocation,
                         slurm::AllocateSlurmJob(options, reference_node));
  body["tasks"] = allocation.nodes();
  if (allocation.nodes() > 1) body["distinct_nodes"] = true;
  body["slurm_tasks_per_node"] = allocation.tasks_per_node;
  // Slurm counts a CPU per task at least; Berth reserves CPUs only when
  // they were asked for (or the whole node), so that a GPU job is not held
  // back by nodes that register few CPUs. Its variables still count them.
  const bool reserve_cpus =
      options.cpus_per_task || options.cpus_per_gpu || options.mem_per_cpu_mib || options.exclusive;
  auto add_share = [&](const slurm::NodeShare& share, json& out) {
    out["gpus"] = share.gpus;
    if (reserve_cpus) out["cpus"] = share.cpus;
    if (share.memory_mib > 0) out["memory_mib"] = share.memory_mib;
  };
  add_share(allocation.shares.front(), body);
  // An --exclusive job's GPUs come with its nodes: asking no memory, it
  // gets the per-CPU default for its CPUs, not the per-GPU one.
  if (options.exclusive && !body.contains("memory_mib")) body["default_memory"] = "per_cpu";
  if (!allocation.even()) {
    json& shapes = body["task_shapes"] = json::array();
    for (const slurm::NodeShare& share : allocation.shares) add_share(share, shapes.emplace_back());
  }
  json env = SlurmOptionEnv(options, allocation);
  if (!env.empty()) body["env"] = std::move(env);
  return Status::Ok();
}

Result<bool> ApplyBerth(std::string_view flag, std::string_view value, SubmitOptions& options) {
  auto text = [&](std::optional<std::string>& field) {
    field = std::string(value);
    return true;
  };
  if (flag == "--gpus") {
    BERTH_ASSIGN_OR_RETURN(options.gpus, Count(flag, value, 0));
    return true;
  }
  if (flag == "--tasks") {
    BERTH_ASSIGN_OR_RETURN(options.tasks, Count(flag, value, 1));
    return true;
  }
  if (flag == "--nodes") {
    BERTH_ASSIGN_OR_RETURN(options.nodes, Count(flag, value, 1));
    return true;
  }
  if (flag == "--retries") {
    BERTH_ASSIGN_OR_RETURN(options.retries, Count(flag, value, 0));
    return true;
  }
  if (flag == "--cpus") {
    char* end = nullptr;
    const std::string copy(value);
    const double cpus = std::strtod(copy.c_str(), &end);
    if (copy.empty() || end != copy.c_str() + copy.size() || cpus < 0) {
      return Bad(flag, "a number of CPUs >= 0", value);
    }
    options.cpus = cpus;
    return true;
  }
  if (flag == "--gpu-type") return text(options.gpu_type);
  if (flag == "--constraint" || flag == "-C") return text(options.constraint);
  if (flag == "--nodelist" || flag == "-w") return text(options.nodelist);
  if (flag == "--exclude" || flag == "-x") return text(options.exclude);
  if (flag == "--mem") return text(options.mem);
  if (flag == "--time") return text(options.time);
  if (flag == "--estimate") return text(options.estimate);
  if (flag == "--name") return text(options.name);
  if (flag == "--priority") return text(options.priority);
  if (flag == "--queue") return text(options.queue);
  if (flag == "--grace") return text(options.grace);
  if (flag == "--signal") return text(options.signal);
  if (flag == "--array") return text(options.array);
  if (flag == "--workdir") return text(options.workdir);
  if (flag == "--output" || flag == "-o") return text(options.output);
  if (flag == "--error" || flag == "-e") return text(options.error);
  if (flag == "--open-mode") return text(options.open_mode);
  if (flag == "--after") return options.after.push_back(std::string(value)), true;
  if (flag == "--env") return options.env.push_back(std::string(value)), true;
  if (flag == "--preemptible") return options.preemptible = true, true;
  if (flag == "--hold") return options.hold = true, true;
  if (flag == "--no-requeue") return options.requeue = false, true;
  if (flag == "--wait-for-nodes") return options.wait_for_nodes = true, true;
  if (flag == "--gpus-in-one-group") return options.gpus_in_one_group = true, true;
  return ApplyContainer(flag, value, options);
}

}  // namespace

void SubmitOptions::FillFrom(const SubmitOptions& lower) {
  auto fill = [](auto& mine, const auto& theirs) {
    if (!mine) mine = theirs;
  };
  fill(gpus, lower.gpus);
  fill(tasks, lower.tasks);
  fill(nodes, lower.nodes);
  fill(slurm, lower.slurm);
  fill(gpu_type, lower.gpu_type);
  fill(cpus, lower.cpus);
  fill(mem, lower.mem);
  fill(time, lower.time);
  fill(estimate, lower.estimate);
  fill(name, lower.name);
  fill(priority, lower.priority);
  fill(queue, lower.queue);
  fill(preemptible, lower.preemptible);
  fill(grace, lower.grace);
  fill(signal, lower.signal);
  fill(export_env, lower.export_env);
  if (after.empty()) after = lower.after;
  fill(array, lower.array);
  if (env.empty()) env = lower.env;
  fill(workdir, lower.workdir);
  fill(output, lower.output);
  fill(error, lower.error);
  fill(open_mode, lower.open_mode);
  fill(retries, lower.retries);
  fill(requeue, lower.requeue);
  fill(hold, lower.hold);
  fill(constraint, lower.constraint);
  fill(nodelist, lower.nodelist);
  fill(exclude, lower.exclude);
  fill(wait_for_nodes, lower.wait_for_nodes);
  fill(gpus_in_one_group, lower.gpus_in_one_group);
  fill(container_image, lower.container_image);
  fill(container_mounts, lower.container_mounts);
  fill(container_workdir, lower.container_workdir);
  fill(container_mount_home, lower.container_mount_home);
  fill(container_pull, lower.container_pull);
}

Result<int64_t> ParseDuration(std::string_view text, std::string_view flag) {
  const std::string expected =
      "a duration: MM, MM:SS, HH:MM:SS, D-HH[:MM[:SS]] or a number with s, m, h or d";
  if (text.empty()) return Bad(flag, expected, text);
  int64_t seconds = 0;
  const char unit = text.back();
  if (unit == 's' || unit == 'm' || unit == 'h' || unit == 'd') {
    std::optional<int64_t> value = Number(text.substr(0, text.size() - 1));
    if (!value) return Bad(flag, expected, text);
    const int64_t scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400;
    seconds = *value * scale;
  } else {
    int64_t days = 0;
    std::string_view clock = text;
    const size_t dash = text.find('-');
    if (dash != std::string_view::npos) {
      std::optional<int64_t> d = Number(text.substr(0, dash));
      if (!d) return Bad(flag, expected, text);
      days = *d;
      clock = text.substr(dash + 1);
    }
    std::vector<int64_t> parts;
    for (std::string_view part : Split(clock, ':')) {
      std::optional<int64_t> value = Number(part);
      if (!value) return Bad(flag, expected, text);
      parts.push_back(*value);
    }
    if (parts.size() > 3) return Bad(flag, expected, text);
    if (dash != std::string_view::npos) {
      // D-HH, D-HH:MM, D-HH:MM:SS
      parts.resize(3, 0);
      seconds = days * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2];
    } else if (parts.size() == 1) {
      seconds = parts[0] * 60;  // minutes, as Slurm reads a bare number
    } else if (parts.size() == 2) {
      seconds = parts[0] * 60 + parts[1];
    } else {
      seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
    }
  }
  if (seconds <= 0) return Bad(flag, "a positive duration", text);
  return seconds;
}

Result<int64_t> ParseMemoryMiB(std::string_view text, std::string_view flag) {
  const std::string expected = "memory like 512M, 16G, 1T or MiB";
  if (text.empty()) return Bad(flag, expected, text);
  int64_t scale = 1;
  std::string_view digits = text;
  switch (text.back()) {
    case 'K':
    case 'k':
      scale = -1024;  // KiB: divided, rounded up below
      break;
    case 'M':
    case 'm':
      break;
    case 'G':
    case 'g':
      scale = 1024;
      break;
    case 'T':
    case 't':
      scale = 1024 * 1024;
      break;
    default:
      scale = 0;
  }
  if (scale != 0) digits = text.substr(0, text.size() - 1);
  std::optional<int64_t> value = Number(digits);
  if (!value) return Bad(flag, expected, text);
  if (scale < 0) return (*value + 1023) / 1024;
  return *value * (scale == 0 ? 1 : scale);
}

Result<bool> ApplyDirective(std::string_view flag, std::optional<std::string_view> value,
                            bool sbatch, SubmitOptions& options) {
  if (TakesValue(flag) && !value) return InvalidArgument(std::string(flag) + ": needs a value");
  if (sbatch && (flag == "--hold" || flag == "-H")) return options.hold = true, true;
  if (sbatch && flag == "--exclusive") return ApplySlurmResource(flag, "", options);
  if (sbatch && (flag == "--requeue" || flag == "--no-requeue")) {
    return options.requeue = flag == "--requeue", true;
  }
  if (!TakesValue(flag)) {
    if (ApplyContainer(flag, "", options)) return true;
    return sbatch ? Result<bool>(false) : ApplyBerth(flag, "", options);
  }
  return sbatch ? ApplySbatch(flag, *value, options) : ApplyBerth(flag, *value, options);
}

Result<ScriptDirectives> ParseScriptDirectives(std::string_view script) {
  ScriptDirectives directives;
  int line_number = 0;
  for (std::string_view line : Split(script, '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;
    line = line.substr(first);
    if (line[0] != '#') break;  // the first command ends the directives
    const bool sbatch = line.starts_with("#SBATCH");
    if (!sbatch && !line.starts_with("#BERTH")) continue;
    // A script with #SBATCH lines is a Slurm job, resources or not: one
    // node, and no GPU unless it asks (slurm/slurm_allocation.h).
    if (sbatch && !directives.sbatch.slurm) directives.sbatch.slurm = slurm::SlurmResourceOptions{};
    const std::string where = "line " + std::to_string(line_number) + ": ";
    const std::vector<std::string> words = Words(line.substr(sbatch ? 7 : 6));
    for (size_t i = 0; i < words.size(); ++i) {
      std::string flag = words[i];
      std::optional<std::string> value;
      if (flag.size() > 2 && flag[0] == '-' && flag[1] != '-') {
        value = flag.substr(2);  // -N2
        flag = flag.substr(0, 2);
      } else if (const size_t eq = flag.find('='); eq != std::string::npos) {
        value = flag.substr(eq + 1);
        flag = flag.substr(0, eq);
      } else if (TakesValue(flag) && i + 1 < words.size()) {
        value = words[++i];
      }
      if (flag.empty() || flag[0] != '-') {
        return InvalidArgument(where + "expected an option, got '" + flag + "'");
      }
      Result<bool> applied =
          ApplyDirective(flag, value ? std::optional<std::string_view>(*value) : std::nullopt,
                         sbatch, sbatch ? directives.sbatch : directives.berth);
      if (!applied.ok()) return InvalidArgument(where + applied.status().message());
      if (*applied) continue;
      if (!sbatch) return InvalidArgument(where + "#BERTH: unknown option '" + flag + "'");
      // A typo must not silently drop what it meant (--gpus-per-nod=2).
      if (!IsSbatchOption(flag))
        return InvalidArgument(where + "#SBATCH: " + UnknownSbatchOption(flag));
      directives.warnings.push_back(where + "#SBATCH " + flag +
                                    " is not supported by Berth; ignored");
    }
  }
  return directives;
}

Result<json> SubmissionBody(const SubmitOptions& options, const std::vector<std::string>& command,
                            const std::string& script,
                            const std::optional<slurm::NodeSize>& reference_node) {
  json body = json::object();
  if (!command.empty()) {
    body["command"] = command;
  } else {
    body["script"] = script;
  }
  const bool berth_resources =
      options.gpus || options.tasks || options.nodes || options.cpus || options.mem;
  if (options.slurm && !berth_resources) {
    BERTH_RETURN_IF_ERROR(AddSlurmShape(*options.slurm, reference_node, body));
    // The array's bounds, the same in every element (its index comes from the node).
    if (options.array) {
      if (auto array_env = slurm::ArrayEnvironment(*options.array)) {
        for (const auto& [name, value] : *array_env) body["env"][name] = value;
      }
    }
  }
  if (options.tasks) {
    body["tasks"] = *options.tasks;
  } else if (options.nodes) {
    body["tasks"] = *options.nodes;
    body["distinct_nodes"] = true;
  }
  if (options.gpus) body["gpus"] = *options.gpus;
  if (options.gpu_type) {
    for (std::string_view model : Split(*options.gpu_type, '|')) {
      if (model.empty()) {
        return Bad("--gpu-type", "a GPU model, or several separated by '|'", *options.gpu_type);
      }
    }
    body["gpu_type"] = *options.gpu_type;
  }
  if (options.constraint) {
    // The server's own parser: a typo is named by position before any request.
    BERTH_RETURN_IF_ERROR(
        core::FeatureExpression::Parse(*options.constraint, "--constraint").status());
    body["constraint"] = *options.constraint;
  }
  // Hostlists pass as written: the server expands them (server/hostlist.h).
  if (options.nodelist) {
    if (options.nodelist->empty()) return Bad("--nodelist", kHostlist, *options.nodelist);
    body["nodelist"] = *options.nodelist;
  }
  if (options.exclude) {
    if (options.exclude->empty()) return Bad("--exclude", kHostlist, *options.exclude);
    body["exclude"] = *options.exclude;
  }
  if (options.cpus) body["cpus"] = *options.cpus;
  if (options.mem) {
    BERTH_ASSIGN_OR_RETURN(int64_t mib, ParseMemoryMiB(*options.mem, "--mem"));
    body["memory_mib"] = mib;
  }
  if (options.time) {
    BERTH_ASSIGN_OR_RETURN(int64_t seconds, ParseDuration(*options.time, "--time"));
    body["time_limit_s"] = seconds;
  }
  if (options.estimate) {
    BERTH_ASSIGN_OR_RETURN(int64_t seconds, ParseDuration(*options.estimate, "--estimate"));
    body["estimate_s"] = seconds;
  }
  if (options.grace) {
    // A bare number is seconds here (a grace period is short).
    std::optional<int64_t> plain = Number(*options.grace);
    if (plain) {
      body["grace_s"] = *plain;
    } else {
      BERTH_ASSIGN_OR_RETURN(int64_t seconds, ParseDuration(*options.grace, "--grace"));
      body["grace_s"] = seconds;
    }
  }
  if (options.signal) {
    BERTH_ASSIGN_OR_RETURN(body["time_limit_signal"],
                           ParseSignalOption(*options.signal, "--signal"));
  }
  if (options.name) body["name"] = *options.name;
  if (options.priority) {
    std::optional<int64_t> number = Number(*options.priority);
    const std::string& word = *options.priority;
    if (!word.empty() && word[0] == '-' && Number(word.substr(1))) {
      body["priority"] = -*Number(word.substr(1));
    } else if (number) {
      body["priority"] = *number;
    } else {
      body["priority"] = word;  // low, normal, high; the server names anything else
    }
  }
  if (options.queue) body["queue"] = *options.queue;
  if (options.preemptible) body["preemptible"] = *options.preemptible;
  if (!options.after.empty()) body["depends_on"] = options.after;
  if (options.array) body["array"] = *options.array;
  if (!options.env.empty()) {
    json env = body.value("env", json::object());
    for (const std::string& pair : options.env) {
      const size_t eq = pair.find('=');
      if (eq == std::string::npos || eq == 0) return Bad("--env", "KEY=VALUE", pair);
      env[pair.substr(0, eq)] = pair.substr(eq + 1);
    }
    body["env"] = env;
  }
  if (options.workdir) body["workdir"] = *options.workdir;
  // The server's own check: a mistyped pattern is named before any request.
  if (options.output) {
    BERTH_RETURN_IF_ERROR(protocol::CheckOutputPattern(*options.output, "--output"));
    body["output"] = *options.output;
  }
  if (options.error) {
    BERTH_RETURN_IF_ERROR(protocol::CheckOutputPattern(*options.error, "--error"));
    body["error"] = *options.error;
  }
  if (options.open_mode) {
    if (*options.open_mode != "append" && *options.open_mode != "truncate") {
      return Bad("--open-mode", "append or truncate", *options.open_mode);
    }
    body["open_mode"] = *options.open_mode;
  }
  if (options.retries) body["retries"] = *options.retries;
  if (options.requeue) body["requeue"] = *options.requeue;
  if (options.hold) body["hold"] = *options.hold;
  if (options.wait_for_nodes) body["wait_for_nodes"] = *options.wait_for_nodes;
  if (options.gpus_in_one_group) body["gpus_in_one_group"] = *options.gpus_in_one_group;
  BERTH_ASSIGN_OR_RETURN(std::optional<json> container, ContainerBody(options));
  if (container) body["container"] = std::move(*container);
  return body;
}

}  // namespace berth::cli
