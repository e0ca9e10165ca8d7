// `sacctmgr show user` on Berth (issue 29, minimal): a user's accounts are
// the queues they may submit to (Berth has no accounts; a queue is both
// partition and account to Slurm tools), printed in sacctmgr's layouts.
// Pure: sacctmgr.cc fetches the queues and the user.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::cli::slurm {

// The queues of GET /api/v1/queues `user` may submit to (allow_users, or
// allow_groups with one of `groups`, on the queue and its parents; no list
// lets everyone in), the default queue first. With no queues configured,
// Berth's one implicit queue: {"default"}.
std::vector<std::string> UserAccounts(const nlohmann::json& queues, const std::string& user,
                                      const std::vector<std::string>& groups);

enum class SacctmgrLayout {
  kColumns,    // right-aligned in 10 characters, a dashed rule under the header
  kParsable,   // -p: '|' after every field
  kParsable2,  // -P: '|' between fields
};

struct SacctmgrUser {
  std::string user;
  std::vector<std::string> accounts;  // UserAccounts; the first is the default
  bool admin = false;
};

// The table for format=FIELDS (User, Account, DefaultAccount, Admin; any
// case; empty: User,DefaultAccount,Admin as Slurm's default). One row per
// account when Account is asked for, else one per user. InvalidArgument
// naming an unknown field.
Result<std::string> SacctmgrUsers(const std::vector<SacctmgrUser>& users,
                                  const std::vector<std::string>& fields, SacctmgrLayout layout,
                                  bool header);

}  // namespace berth::cli::slurm
