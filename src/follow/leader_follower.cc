#include "follow/leader_follower.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <utility>

#include "common/check.h"

namespace berth::follow {
namespace {

std::string Trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

std::string Normalize(std::string url) {
  if (url.find("://") == std::string::npos) url = "http://" + url;
  while (url.size() > 1 && url.back() == '/') url.pop_back();
  return url;
}

// Whether a request that failed so certainly never reached the server: no
// connection was made (or no TLS session over it).
bool NeverSent(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
    case httplib::Error::ConnectionTimeout:
    case httplib::Error::BindIPAddress:
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
      return true;
    default:
      return false;
  }
}

std::string Describe(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "connection refused or unreachable";
    case httplib::Error::ConnectionTimeout:
      return "connection timed out";
    case httplib::Error::Read:
      return "connection lost before the answer";
    case httplib::Error::Write:
      return "connection lost while sending";
    default:
      return httplib::to_string(error);
  }
}

// A standby's 503 names no leader while it does not know one (an election
// under way): its message says "standby".
bool FromStandby(const httplib::Response& response) {
  if (response.status != 503) return false;
  const nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  if (!body.is_object() || !body.contains("error") || !body["error"].is_object()) return false;
  const nlohmann::json& message = body["error"]["message"];
  return message.is_string() && message.get<std::string>().rfind("standby", 0) == 0;
}

}  // namespace

Result<std::vector<std::string>> ParseServerList(const std::string& text, const std::string& flag) {
  std::vector<std::string> addresses;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item =
        Trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (item.empty()) {
      return InvalidArgument(flag + ": expected URLs separated by commas, got '" + text + "'");
    }
    addresses.push_back(Normalize(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return addresses;
}

std::string JoinServerList(const std::vector<std::string>& addresses) {
  std::string out;
  for (const std::string& address : addresses) out += (out.empty() ? "" : ",") + address;
  return out;
}

LeaderFollower::LeaderFollower(std::vector<std::string> addresses, FollowOptions options)
    : addresses_(std::move(addresses)), options_(std::move(options)) {
  BERTH_CHECK(!addresses_.empty()) << "LeaderFollower needs at least one address";
  current_ = addresses_.front();
}

Result<httplib::Response> LeaderFollower::Request(const Send& send, Replay replay) {
  const auto deadline = std::chrono::steady_clock::now() + options_.patience;
  std::chrono::milliseconds backoff = options_.first_backoff;
  std::vector<Attempt> attempts;  // each address's last error, in the order first tried
  std::set<std::string> swept;    // tried since the last backoff
  // Whether an answer said that another server leads: worth waiting for
  // even with a single address.
  bool several = addresses_.size() > 1;
  while (true) {
    const std::string address = current_;
    swept.insert(address);
    httplib::Result result = send(ClientFor(address));
    std::string leader;
    std::string error;
    const Outcome outcome = Classify(result, replay, leader, error);
    if (outcome == Outcome::kAnswered) return std::move(result.value());
    auto seen = std::find_if(attempts.begin(), attempts.end(),
                             [&](const Attempt& a) { return a.address == address; });
    if (seen == attempts.end()) {
      attempts.push_back(Attempt{address, error});
    } else {
      seen->error = error;
    }
    if (outcome == Outcome::kStop) return Failed(attempts);
    if (result) several = true;  // a standby answered
    MoveTo(!leader.empty() && leader != address ? leader : NextInList());
    if (swept.count(current_) == 0) continue;  // this sweep goes on, at once
    if (!several || options_.patience.count() == 0) return Failed(attempts);
    if (std::chrono::steady_clock::now() + backoff > deadline) return Failed(attempts);
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);
    swept.clear();
  }
}

LeaderFollower::Outcome LeaderFollower::Classify(const httplib::Result& result, Replay replay,
                                                 std::string& leader, std::string& error) const {
  if (!result) {
    error = Describe(result.error());
    if (NeverSent(result.error()) || replay == Replay::kSafe) return Outcome::kMove;
    error += "; not sent again: it may have been applied";
    return Outcome::kStop;
  }
  if (result->status != 503) return Outcome::kAnswered;
  if (result->has_header(kLeaderHeader)) {
    leader = Normalize(Trim(result->get_header_value(kLeaderHeader)));
    error = "standby; the leader is " + leader;
    return Outcome::kMove;
  }
  if (FromStandby(*result)) {
    error = "standby; leader unknown";
    return Outcome::kMove;
  }
  return Outcome::kAnswered;  // the leader's own 503 (its store): the caller's to judge
}

std::string LeaderFollower::NextInList() { return addresses_[(position_ + 1) % addresses_.size()]; }

void LeaderFollower::MoveTo(const std::string& address) {
  current_ = address;
  auto listed = std::find(addresses_.begin(), addresses_.end(), address);
  if (listed != addresses_.end()) position_ = static_cast<size_t>(listed - addresses_.begin());
}

httplib::Client& LeaderFollower::ClientFor(const std::string& address) {
  std::unique_ptr<httplib::Client>& client = clients_[address];
  if (!client) {
    client = std::make_unique<httplib::Client>(address);
    if (options_.configure) options_.configure(*client);
  }
  return *client;
}

Status LeaderFollower::Failed(const std::vector<Attempt>& attempts) {
  if (attempts.size() == 1) {
    return Unavailable("cannot reach the server at " + attempts[0].address + " (" +
                       attempts[0].error + ")");
  }
  std::string message = "cannot reach any server:";
  for (size_t i = 0; i < attempts.size(); ++i) {
    message += (i == 0 ? " " : ", ") + attempts[i].address + " (" + attempts[i].error + ")";
  }
  return Unavailable(message);
}

}  // namespace berth::follow
