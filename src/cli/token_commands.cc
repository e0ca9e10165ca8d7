// `berth token create | list | revoke`.
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/api_client.h"
#include "cli/client_commands.h"
#include "cli/submit_options.h"
#include "cli/table.h"

namespace berth::cli {
namespace {

using nlohmann::json;

struct CreateFlags {
  std::string user;
  std::string role = "user";
  std::string node;
  std::string expires_in;  // a duration as --time takes it; empty: never
  ClientFlags client;
};

void RunCreate(const CreateFlags& flags) {
  json body{{"user", flags.user}, {"role", flags.role}};
  if (!flags.node.empty()) body["node"] = flags.node;
  if (!flags.expires_in.empty()) {
    Result<int64_t> seconds = ParseDuration(flags.expires_in, "--expires-in");
    if (!seconds.ok()) Exit("token create", seconds.status());
    body["expires_in_s"] = *seconds;
  }
  const ApiClient client = ConnectOrExit("token create", flags.client);
  Result<json> reply = client.Post("/api/v1/tokens", body);
  if (!reply.ok()) Exit("token create", reply.status());
  std::printf("%s\n",
              flags.client.json ? reply->dump().c_str() : reply->value("token", "").c_str());
}

// What a token is now: revoked wins over expired, which the server judged by
// its own clock.
std::string TokenState(const json& token) {
  if (token.value("revoked", false)) return "revoked";
  if (token.value("expired", false)) return "expired";
  return "active";
}

void RunList(const ClientFlags& flags) {
  const ApiClient client = ConnectOrExit("token list", flags);
  Result<json> reply = client.Get("/api/v1/tokens");
  if (!reply.ok()) Exit("token list", reply.status());
  if (flags.json) return (void)std::printf("%s\n", (*reply)["tokens"].dump(2).c_str());
  Table table({"ID", "USER", "ROLE", "NODE", "CREATED", "EXPIRES", "STATE"});
  for (const json& token : (*reply)["tokens"]) {
    const std::optional<core::Time> created = JsonTime(token["created"]);
    const std::optional<core::Time> expires = JsonTime(token["expires"]);
    const std::string node = token.value("node", "");
    table.Add({{token.value("id", "")},
               {token.value("user", "")},
               {token.value("role", "")},
               {node.empty() ? "-" : node},
               {created ? ShortClock(*created) : "-"},
               {expires ? ShortClock(*expires) : "never"},
               {TokenState(token)}});
  }
  std::fputs(table.Render(ColorOutput()).c_str(), stdout);
}

void RunRevoke(const ClientFlags& flags, const std::string& id) {
  const ApiClient client = ConnectOrExit("token revoke", flags);
  Result<json> reply = client.Delete("/api/v1/tokens/" + id);
  if (!reply.ok()) Exit("token revoke", reply.status());
  if (flags.json) std::printf("%s\n", reply->dump().c_str());
}

}  // namespace

void AddTokenCommands(CLI::App& app) {
  CLI::App* token_app = app.add_subcommand("token", "Manage API tokens");
  token_app->require_subcommand(1);

  auto create = std::make_shared<CreateFlags>();
  CLI::App* create_app = token_app->add_subcommand("create", "Issue a token (admins)");
  create_app->add_option("--user", create->user, "Who the token speaks for")->required();
  create_app
      ->add_option("--role", create->role, "admin, user, agent or metrics (reads /metrics only)")
      ->capture_default_str();
  create_app->add_option("--node", create->node, "With --role agent: the node it belongs to");
  create_app->add_option("--expires-in", create->expires_in,
                         "Refuse it after this long: 90m, 12h, 30d, D-HH:MM (default: never)");
  AddClientFlags(*create_app, create->client);
  create_app->callback([create] {
    RunCreate(*create);
    std::exit(0);
  });

  auto list = std::make_shared<ClientFlags>();
  CLI::App* list_app =
      token_app->add_subcommand("list", "Tokens: every one for admins, your own for users");
  AddClientFlags(*list_app, *list);
  list_app->callback([list] { RunList(*list); });

  auto revoke = std::make_shared<std::pair<ClientFlags, std::string>>();
  CLI::App* revoke_app =
      token_app->add_subcommand("revoke", "Revoke a token at once (admins: any; users: their own)");
  revoke_app->add_option("id", revoke->second, "The token's id (berth token list)")->required();
  AddClientFlags(*revoke_app, revoke->first);
  revoke_app->callback([revoke] { RunRevoke(revoke->first, revoke->second); });
}

}  // namespace berth::cli
