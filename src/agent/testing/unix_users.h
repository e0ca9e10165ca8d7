// Real Unix accounts for the tests of running tasks as their users. CI runs
// as root, so tests make their own: berth-test-* accounts and a group,
// created on first use and kept (parallel test processes share them; two
// that create one at once both find it after). Without root there are
// none, and the tests that need them skip.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "agent/account.h"

namespace berth::agent::testing {

inline constexpr char kTestGroup[] = "berth-test-team";

// The account `name` (made with a home and /bin/sh; in kTestGroup when
// `in_group`), or nullopt when it cannot be made.
inline std::optional<Account> TestAccount(const std::string& name, bool in_group) {
  if (Result<Account> found = LookupUnixAccount(name); found.ok()) return *found;
  if (::geteuid() != 0) return std::nullopt;
  (void)std::system((std::string("groupadd -f ") + kTestGroup + " 2>/dev/null").c_str());
  const std::string add = "useradd --create-home --shell /bin/sh " +
                          (in_group ? std::string("--groups ") + kTestGroup + " " : "") + name +
                          " 2>/dev/null";
  (void)std::system(add.c_str());
  Result<Account> made = LookupUnixAccount(name);
  return made.ok() ? std::optional<Account>(*made) : std::nullopt;
}

}  // namespace berth::agent::testing
