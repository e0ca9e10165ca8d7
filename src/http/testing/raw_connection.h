// A raw TCP client for tests of HTTP servers on loopback: it sends exactly
// the bytes a test gives it (malformed, split, slow) and reads the answer.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <utility>

namespace berth::http::testing {

// A TCP connection to 127.0.0.1 that sends and reads raw bytes.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }

  bool Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // Everything until the peer closes or `timeout` passes.
  std::string ReadUntilClosed(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline && ReadMore()) {
    }
    return std::exchange(buffer_, "");
  }

  // One response: its head and a Content-Length body.
  std::string ReadResponse(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    do {
      const size_t end = buffer_.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      size_t length = 0;
      const size_t field = buffer_.find("Content-Length: ");
      if (field != std::string::npos && field < end) {
        length = std::stoul(buffer_.substr(field + 16));
      }
      if (buffer_.size() >= end + 4 + length) {
        std::string response = buffer_.substr(0, end + 4 + length);
        buffer_.erase(0, end + 4 + length);
        return response;
      }
    } while (std::chrono::steady_clock::now() < deadline && ReadMore());
    return buffer_;
  }

  bool closed() const { return closed_; }

 private:
  // Waits up to 10 ms for bytes and adds them to buffer_; false once the
  // peer has closed.
  bool ReadMore() {
    pollfd entry{fd_, POLLIN, 0};
    if (::poll(&entry, 1, 10) <= 0) return true;
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) {
      closed_ = true;
      return false;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
  std::string buffer_;
};

inline std::string StatusLine(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

inline std::string BodyOf(const std::string& response) {
  const size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

}  // namespace berth::http::testing
