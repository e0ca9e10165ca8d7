#include "cli/slurm/sacctmgr_format.h"

#include <strings.h>

#include <algorithm>
#include <map>
#include <optional>

namespace berth::cli::slurm {
namespace {

using nlohmann::json;

bool Lists(const json& list, const std::string& name) {
  if (!list.is_array()) return false;
  return std::any_of(list.begin(), list.end(),
                     [&](const json& item) { return item.is_string() && item == name; });
}

bool Admits(const json& queue, const std::string& user, const std::vector<std::string>& groups) {
  const json& users = queue.contains("allow_users") ? queue["allow_users"] : json();
  const json& allowed_groups = queue.contains("allow_groups") ? queue["allow_groups"] : json();
  const bool open = (!users.is_array() || users.empty()) &&
                    (!allowed_groups.is_array() || allowed_groups.empty());
  if (open || Lists(users, user)) return true;
  return std::any_of(groups.begin(), groups.end(),
                     [&](const std::string& group) { return Lists(allowed_groups, group); });
}

enum class Field { kUser, kAccount, kDefaultAccount, kAdmin };

std::optional<Field> ParseField(const std::string& name) {
  static const std::vector<std::pair<const char*, Field>> kFields = {
      {"user", Field::kUser},
      {"account", Field::kAccount},
      {"defaultaccount", Field::kDefaultAccount},
      {"defacct", Field::kDefaultAccount},
      {"admin", Field::kAdmin},
      {"adminlevel", Field::kAdmin},
  };
  for (const auto& [word, field] : kFields) {
    if (strcasecmp(word, name.c_str()) == 0) return field;
  }
  return std::nullopt;
}

const char* Header(Field field) {
  switch (field) {
    case Field::kUser:
      return "User";
    case Field::kAccount:
      return "Account";
    case Field::kDefaultAccount:
      return "Def Acct";
    case Field::kAdmin:
      return "Admin";
  }
  return "";
}

// sacctmgr's columns: right-aligned in 10, a longer value cut with '+'.
std::string Column(const std::string& value) {
  constexpr size_t kWidth = 10;
  if (value.size() > kWidth) return value.substr(0, kWidth - 1) + "+";
  return std::string(kWidth - value.size(), ' ') + value;
}

std::string Line(const std::vector<std::string>& cells, SacctmgrLayout layout) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    switch (layout) {
      case SacctmgrLayout::kColumns:
        line += Column(cells[i]) + " ";
        break;
      case SacctmgrLayout::kParsable:
        line += cells[i] + "|";
        break;
      case SacctmgrLayout::kParsable2:
        line += (i > 0 ? "|" : "") + cells[i];
        break;
    }
  }
  return line + "\n";
}

}  // namespace

std::vector<std::string> UserAccounts(const json& queues, const std::string& user,
                                      const std::vector<std::string>& groups) {
  const json list = queues.contains("queues") ? queues["queues"] : json::array();
  if (!list.is_array() || list.empty()) return {"default"};
  std::map<std::string, const json*> by_name;
  for (const json& queue : list) by_name[queue.value("name", "")] = &queue;
  std::vector<std::string> accounts;
  for (const json& queue : list) {
    bool admitted = true;
    // The queue and its parents: a child narrows its parent's rules.
    const json* at = &queue;
    for (size_t depth = 0; at != nullptr && admitted && depth < list.size(); ++depth) {
      admitted = Admits(*at, user, groups);
      auto parent = by_name.find(at->value("parent", ""));
      at = parent == by_name.end() || at->value("parent", "").empty() ? nullptr : parent->second;
    }
    if (!admitted) continue;
    const std::string name = queue.value("name", "");
    if (queue.value("default", false)) {
      accounts.insert(accounts.begin(), name);
    } else {
      accounts.push_back(name);
    }
  }
  return accounts;
}

Result<std::string> SacctmgrUsers(const std::vector<SacctmgrUser>& users,
                                  const std::vector<std::string>& fields, SacctmgrLayout layout,
                                  bool header) {
  std::vector<Field> columns;
  for (const std::string& name : fields) {
    std::optional<Field> field = ParseField(name);
    if (!field) return InvalidArgument("Invalid field requested: \"" + name + "\"");
    columns.push_back(*field);
  }
  if (columns.empty()) columns = {Field::kUser, Field::kDefaultAccount, Field::kAdmin};
  const bool per_account =
      std::find(columns.begin(), columns.end(), Field::kAccount) != columns.end();
  std::string out;
  if (header) {
    std::vector<std::string> names;
    for (Field field : columns) names.emplace_back(Header(field));
    out += Line(names, layout);
    if (layout == SacctmgrLayout::kColumns) {
      out += Line(std::vector<std::string>(columns.size(), std::string(10, '-')), layout);
    }
  }
  for (const SacctmgrUser& user : users) {
    const std::string default_account = user.accounts.empty() ? "" : user.accounts.front();
    const std::vector<std::string> accounts =
        per_account ? user.accounts : std::vector<std::string>{default_account};
    for (const std::string& account : accounts) {
      std::vector<std::string> cells;
      for (Field field : columns) {
        switch (field) {
          case Field::kUser:
            cells.push_back(user.user);
            break;
          case Field::kAccount:
            cells.push_back(account);
            break;
          case Field::kDefaultAccount:
            cells.push_back(default_account);
            break;
          case Field::kAdmin:
            cells.emplace_back(user.admin ? "Administrator" : "None");
            break;
        }
      }
      out += Line(cells, layout);
    }
  }
  return out;
}

}  // namespace berth::cli::slurm
