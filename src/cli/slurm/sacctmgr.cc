// sacctmgr: `show user [NAME] [format=...]` only (issue 29, minimal), for
// tools that ask Slurm which accounts a user may charge: Berth's queues
// (cli/slurm/sacctmgr_format.h). Everything else is refused by name.
#include <strings.h>

#include <cstdio>

#include "cli/slurm/sacctmgr_format.h"
#include "cli/slurm/slurm_client.h"
#include "cli/slurm/slurm_commands.h"
#include "common/unix_account.h"

namespace berth::cli::slurm {
namespace {

using nlohmann::json;

constexpr char kUsage[] =
    "Usage: sacctmgr [-n] [-p|-P] show user [NAME] [format=User,Account,DefaultAccount,Admin]\n"
    "A user's accounts are the Berth queues they may submit to (docs/from-slurm.md).\n";

bool Is(const std::string& text, const char* word) { return strcasecmp(text.c_str(), word) == 0; }

// "key=value" with the key in any case; empty when `arg` is not one.
std::string ValueOf(const std::string& arg, const char* key) {
  const size_t equals = arg.find('=');
  if (equals == std::string::npos || strcasecmp(arg.substr(0, equals).c_str(), key) != 0) {
    return "";
  }
  return arg.substr(equals + 1);
}

}  // namespace

int Sacctmgr(int argc, char** argv) {
  const std::string command = argv[0];
  bool header = true;
  SacctmgrLayout layout = SacctmgrLayout::kColumns;
  // getopt's way: "-nP" is "-n -P".
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-') {
      for (size_t c = 1; c < arg.size(); ++c) words.push_back(std::string("-") + arg[c]);
    } else {
      words.push_back(arg);
    }
  }
  std::vector<std::string> args;
  for (const std::string& arg : words) {
    if (arg == "-n" || arg == "--noheader") {
      header = false;
    } else if (arg == "-P" || arg == "--parsable2") {
      layout = SacctmgrLayout::kParsable2;
    } else if (arg == "-p" || arg == "--parsable") {
      layout = SacctmgrLayout::kParsable;
    } else if (arg == "-i" || arg == "--immediate" || arg == "-Q" || arg == "--quiet") {
      // Nothing to confirm: Berth's sacctmgr only reads.
    } else if (arg == "-h" || arg == "--help" || arg == "--usage") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "%s: unrecognized option '%s'\n%s", command.c_str(), arg.c_str(),
                   kUsage);
      return kSlurmExitError;
    } else {
      args.push_back(arg);
    }
  }
  if (args.size() < 2 || !(Is(args[0], "show") || Is(args[0], "list"))) {
    Fail(command, (args.empty() ? std::string("no command") : "'" + args[0] + "'") +
                      ": Berth's sacctmgr only shows users (sacctmgr show user ...)");
  }
  if (!Is(args[1], "user") && !Is(args[1], "users")) {
    Fail(command, "'" + args[1] + "': Berth's sacctmgr only shows users (sacctmgr show user ...)");
  }
  std::vector<std::string> fields;
  std::string name;
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (std::string format = ValueOf(arg, "format"); !format.empty()) {
      fields = SplitList(format);
    } else if (std::string user = ValueOf(arg, "user"); !user.empty()) {
      name = user;
    } else if (std::string named = ValueOf(arg, "name"); !named.empty()) {
      name = named;
    } else if (Is(arg, "withassoc") || Is(arg, "where")) {
      // Every row is an association already (a user and a queue).
    } else if (arg.find('=') == std::string::npos) {
      name = arg;
    } else {
      Fail(command, "Unknown condition: " + arg);
    }
  }
  const ApiClient client = ConnectOrFail(command);
  const json whoami = GetOrFail(command, client, "/api/v1/whoami");
  const std::string me = whoami.value("user", "");
  if (name.empty()) name = me;
  std::vector<std::string> groups;
  if (Result<UnixAccount> account = LookupUnixAccount(name); account.ok()) {
    groups = GroupNames(account->groups);
  }
  SacctmgrUser user;
  user.user = name;
  user.accounts = UserAccounts(GetOrFail(command, client, "/api/v1/queues"), name, groups);
  user.admin = name == me && whoami.value("role", "") == "admin";
  Result<std::string> table = SacctmgrUsers({user}, fields, layout, header);
  if (!table.ok()) {
    std::fprintf(stderr, "%s\n", table.status().message().c_str());
    return kSlurmExitError;
  }
  std::fputs(table->c_str(), stdout);
  return 0;
}

}  // namespace berth::cli::slurm
