#include "cli/slurm/sbatch_args.h"

#include <array>
#include <string_view>

namespace berth::cli::slurm {
namespace {

// sbatch's options that take no value (the rest take one).
bool TakesNoValue(std::string_view flag) {
  static constexpr std::array<std::string_view, 20> kFlags = {
      "--hold",          "-H",           "--requeue", "--no-requeue", "--parsable",
      "--exclusive",     "--wait",       "-W",        "--no-kill",    "-k",
      "--test-only",     "--overcommit", "-O",        "--contiguous", "--spread-job",
      "--use-min-nodes", "--ignore-pbs", "--quiet",   "-Q",           "--verbose"};
  for (std::string_view known : kFlags) {
    if (flag == known) return true;
  }
  return flag == "-v";
}

}  // namespace

Result<SbatchRequest> ParseSbatchArgs(const std::vector<std::string>& args, WaitOption wait) {
  SbatchRequest request;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    std::string flag = args[i];
    if (flag.empty() || flag[0] != '-' || flag == "-") break;  // the script
    std::optional<std::string> value;
    if (flag.size() > 2 && flag[0] == '-' && flag[1] != '-') {
      value = flag.substr(2);  // -N2, -Jname
      flag = flag.substr(0, 2);
    } else if (const size_t eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (!TakesNoValue(flag) ||
               (wait == WaitOption::kSeconds && (flag == "-W" || flag == "--wait"))) {
      if (i + 1 >= args.size()) return InvalidArgument(flag + ": expects a value");
      value = args[++i];
    }
    if (flag == "--parsable") {
      request.parsable = true;
      continue;
    }
    if (flag == "--wait" || flag == "-W") {
      request.wait = true;
      continue;
    }
    if (flag == "--wrap") {
      request.wrap = value.value_or("");
      continue;
    }
    Result<bool> applied =
        ApplyDirective(flag, value ? std::optional<std::string_view>(*value) : std::nullopt, true,
                       request.options);
    if (!applied.ok()) return applied.status();
    if (!*applied) request.warnings.push_back(flag + " has no Berth meaning; ignored");
  }
  if (i < args.size()) {
    if (request.wrap) return InvalidArgument("--wrap: give no script as well ('" + args[i] + "')");
    request.script = args[i];
    request.script_args.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
  }
  return request;
}

std::string WrapScript(const std::string& command) { return "#!/bin/sh\n" + command + "\n"; }

Result<nlohmann::json> SbatchBody(SbatchRequest request, const std::string& script,
                                  const std::string& workdir, const Environment& inheritable,
                                  std::vector<std::string>& warnings,
                                  const std::optional<NodeSize>& reference_node) {
  if (!script.starts_with("#!")) {
    return InvalidArgument(
        "This does not look like a batch script.  The first line must start with #! followed "
        "by the path to an interpreter.");
  }
  if (!request.script_args.empty()) {
    return InvalidArgument("Berth runs a batch script without arguments (got '" +
                           request.script_args[0] + "'): put them in the script");
  }
  BERTH_ASSIGN_OR_RETURN(ScriptDirectives directives, ParseScriptDirectives(script));
  warnings = std::move(directives.warnings);
  // Command line over #BERTH over #SBATCH, as berth submit reads them.
  request.options.FillFrom(directives.berth);
  request.options.FillFrom(directives.sbatch);
  if (!request.options.workdir) request.options.workdir = workdir;
  if (!request.options.name) {
    const std::string& path = request.script.value_or("sbatch");
    request.options.name = request.wrap ? "wrap" : path.substr(path.rfind('/') + 1);
  }
  // A Slurm job even without a resource option: one task on one node.
  if (!request.options.slurm) request.options.slurm = SlurmResourceOptions{};
  BERTH_ASSIGN_OR_RETURN(nlohmann::json body,
                         SubmissionBody(request.options, {}, script, reference_node));
  nlohmann::json& env = body["env"];
  if (!env.is_object()) env = nlohmann::json::object();
  // The submitting shell's, under what sbatch itself sets.
  BERTH_ASSIGN_OR_RETURN(Environment exported,
                         ExportedEnvironment(request.options.export_env.value_or(""), inheritable));
  for (auto& [name, value] : exported) {
    if (!env.contains(name)) env[name] = std::move(value);
  }
  env["SLURM_SUBMIT_DIR"] = workdir;
  if (!request.submit_host.empty()) env["SLURM_SUBMIT_HOST"] = request.submit_host;
  return body;
}

bool AsksForHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "--usage" || arg == "-h") return true;
    if (!arg.empty() && arg[0] != '-') return false;
  }
  return false;
}

}  // namespace berth::cli::slurm
