#include "api_client.h"

#include <atomic>
#include <stdexcept>
#include <thread>

namespace berth::bench {

using nlohmann::json;

httplib::Headers Bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

void PostAll(int port, const std::string& path, size_t count, int connections,
             const std::function<std::pair<std::string, json>(size_t)>& request,
             const std::function<void(size_t, const std::string&)>& reply) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::string error;
  std::vector<std::thread> threads;
  for (int t = 0; t < connections; ++t) {
    threads.emplace_back([&] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);  // headers and body leave without waiting for an ACK
      client.set_read_timeout(std::chrono::seconds(60));
      for (size_t i = next++; i < count && !failed; i = next++) {
        const auto [token, body] = request(i);
        auto result = client.Post(path, Bearer(token), body.dump(), "application/json");
        if (!result || result->status != 201) {
          if (!failed.exchange(true)) {
            error = result ? result->body : httplib::to_string(result.error());
          }
          return;
        }
        if (reply) reply(i, result->body);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  if (failed) throw std::runtime_error("POST " + path + " failed: " + error);
}

std::vector<std::string> IssueTokens(int port, const std::string& admin, int count,
                                     const std::function<json(int)>& body) {
  std::vector<std::string> tokens(static_cast<size_t>(count));
  PostAll(
      port, "/api/v1/tokens", tokens.size(), 4,
      [&](size_t i) {
        return std::pair{admin, body(static_cast<int>(i))};
      },
      [&](size_t i, const std::string& answer) {
        tokens[i] = json::parse(answer).at("token").get<std::string>();
      });
  return tokens;
}

}  // namespace berth::bench
