#include "cli/command_line.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/api_client.h"

namespace berth::cli {
namespace {

// CLI11's type names, in words.
std::string Wanted(const std::string& type_name) {
  if (type_name.starts_with("INT")) return "an integer";
  if (type_name.starts_with("UINT")) return "a non-negative integer";
  if (type_name.starts_with("FLOAT")) return "a number";
  if (type_name.starts_with("BOOL")) return "true or false";
  return "a valid value";
}

const CLI::Option* FindOption(const CLI::App& app, const std::string& name) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->check_name(name) || option->get_name() == name) return option;
  }
  return nullptr;
}

// CLI11 says "Could not convert: --gpus = two"; say what --gpus wanted.
std::string ConversionMessage(const CLI::App& command, const std::string& what) {
  const std::string prefix = "Could not convert: ";
  const size_t equals = what.find(" = ");
  if (!what.starts_with(prefix) || equals == std::string::npos) return what;
  const std::string name = what.substr(prefix.size(), equals - prefix.size());
  const std::string value = what.substr(equals + 3);
  const CLI::Option* option = FindOption(command, name);
  const std::string wanted = option == nullptr ? "a valid value" : Wanted(option->get_type_name());
  return name + ": expected " + wanted + ", got '" + value + "'";
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

// The flags a command takes, its parents' included ("--gpus", "-o").
std::vector<std::string> KnownFlags(const CLI::App& command) {
  std::vector<std::string> flags;
  for (const CLI::App* app = &command; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* option : app->get_options()) {
      for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
      for (const std::string& name : option->get_snames()) flags.push_back("-" + name);
    }
  }
  return flags;
}

// CLI11 names the words it could not place, which after an unknown flag
// may be the command after `--`: name the first unknown flag instead, with
// the nearest known one.
std::optional<std::string> UnknownFlag(const CLI::App& command, int argc, const char* const* argv) {
  const std::vector<std::string> known = KnownFlags(command);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-' || std::isdigit(static_cast<unsigned char>(arg[1]))) {
      continue;
    }
    const std::string name = arg.substr(0, arg.find('='));
    // -abc: short flags together; the first names it.
    const std::string flag = name[1] == '-' ? name : name.substr(0, 2);
    if (std::find(known.begin(), known.end(), flag) != known.end()) continue;
    const std::string nearest = NearestName(flag, known);
    return flag + ": unknown flag" + (nearest.empty() ? "" : " (did you mean " + nearest + "?)");
  }
  return std::nullopt;
}

}  // namespace

std::string NearestName(const std::string& word, const std::vector<std::string>& candidates) {
  std::string nearest;
  size_t best = 3;  // only a near miss
  for (const std::string& candidate : candidates) {
    const size_t distance = EditDistance(word, candidate);
    if (distance < best) {
      best = distance;
      nearest = candidate;
    }
  }
  return nearest;
}

void OneValuePerOccurrence(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_positional() || option->get_items_expected_max() <= 1) continue;
    option->expected(1)->allow_extra_args(false)->multi_option_policy(
        CLI::MultiOptionPolicy::TakeAll);
  }
  for (CLI::App* sub : app.get_subcommands({})) OneValuePerOccurrence(*sub);
}

int ParseCommandLine(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    // The (sub)command being read when it failed names the message.
    std::string where = std::filesystem::path(argc > 0 ? argv[0] : "berth").filename().string();
    const CLI::App* command = &app;
    while (!command->get_subcommands().empty()) {
      command = command->get_subcommands().back();
      where += " " + command->get_name();
    }
    std::string message = error.what();
    if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
      message = ConversionMessage(*command, message);
    } else if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
      message = UnknownFlag(*command, argc, argv).value_or(message);
    }
    std::fprintf(stderr, "%s: %s\nRun `%s --help` for the flags.\n", where.c_str(), message.c_str(),
                 where.c_str());
    return kExitUsage;
  }
  return kExitOk;
}

void FailCommand(std::string_view command, const std::string& message) {
  Exit(std::string(command), InvalidArgument(message));  // exits kExitUsage
}

}  // namespace berth::cli
