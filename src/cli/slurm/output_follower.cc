#include "cli/slurm/output_follower.h"

#include <cstdio>

namespace berth::cli::slurm {

void OutputFollower::Add(int32_t rank, std::string path) {
  sources_.push_back(Source{rank, std::move(path), 0, ""});
}

bool OutputFollower::Pump() {
  bool done = true;
  for (Source& source : sources_) {
    Result<RawReply> reply = client_.GetRaw(source.path + std::to_string(source.offset));
    if (!reply.ok()) {
      // Not there yet (the node has not started it), or gone with its node.
      done = false;
      continue;
    }
    source.offset += static_cast<int64_t>(reply->body.size());
    if (!reply->body.empty()) Print(source, reply->body);
    if (reply->headers["X-Berth-Task-Running"] == "1" || !reply->body.empty()) done = false;
  }
  std::fflush(stdout);
  return done;
}

void OutputFollower::Print(Source& source, const std::string& bytes) {
  if (!label_) {
    std::fwrite(bytes.data(), 1, bytes.size(), stdout);
    return;
  }
  source.partial += bytes;
  size_t start = 0;
  for (size_t newline; (newline = source.partial.find('\n', start)) != std::string::npos;
       start = newline + 1) {
    std::printf("%d: %.*s\n", source.rank, static_cast<int>(newline - start),
                source.partial.data() + start);
  }
  source.partial.erase(0, start);
}

void OutputFollower::Flush() {
  for (Source& source : sources_) {
    if (label_ && !source.partial.empty())
      std::printf("%d: %s\n", source.rank, source.partial.c_str());
    source.partial.clear();
  }
  std::fflush(stdout);
}

}  // namespace berth::cli::slurm
