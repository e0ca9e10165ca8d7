// The benchmarks' API client side: parallel POSTs over kept-alive loopback
// connections (TCP_NODELAY, as the server's sockets), and token issuing.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace berth::bench {

httplib::Headers Bearer(const std::string& token);

// POSTs requests 0..count-1 (each a bearer token and a body) to `path` from
// `connections` kept-alive connections, each on a thread of its own taking
// the next request when its last one is answered; `reply` gets each
// answer's body. Throws on the first answer that is not 201.
void PostAll(int port, const std::string& path, size_t count, int connections,
             const std::function<std::pair<std::string, nlohmann::json>(size_t)>& request,
             const std::function<void(size_t, const std::string&)>& reply = {});

// `count` tokens, token i created (by `admin`) with body(i).
std::vector<std::string> IssueTokens(int port, const std::string& admin, int count,
                                     const std::function<nlohmann::json(int)>& body);

}  // namespace berth::bench
