#include "server_process.h"

#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace berth::bench {

int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind a loopback port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

ServerProcess::ServerProcess(const std::string& berth_binary, const std::string& dir,
                             const std::string& extra_toml, std::chrono::seconds timeout)
    : binary_(berth_binary), dir_(dir), port_(FreeLoopbackPort()) {
  std::ofstream config(dir_ + "/berth.toml");
  config << "listen = \"127.0.0.1:" << port_ << "\"\n"
         << "data_dir = \"" << dir_ << "\"\n"
         << extra_toml;
  if (!config) throw std::runtime_error("cannot write " + dir_ + "/berth.toml");
  config.close();
  Spawn();
  WaitReady(timeout);
}

ServerProcess::~ServerProcess() { Stop(); }

void ServerProcess::Spawn() {
  const std::string config = dir_ + "/berth.toml";
  const std::string log = dir_ + "/server.log";
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execl(binary_.c_str(), binary_.c_str(), "server", "--config", config.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
}

double ServerProcess::WaitReady(std::chrono::seconds timeout) const {
  const auto start = std::chrono::steady_clock::now();
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(std::chrono::seconds(1));
  while (std::chrono::steady_clock::now() - start < timeout) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      throw std::runtime_error("berth server exited while starting; see " + dir_ + "/server.log");
    }
    if (auto result = client.Get("/readyz"); result && result->status == 200) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  throw std::runtime_error("berth server not ready within " + std::to_string(timeout.count()) +
                           " s; see " + dir_ + "/server.log");
}

void ServerProcess::Stop(std::chrono::seconds grace) {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
}

double ServerProcess::Restart(std::chrono::seconds timeout) {
  Stop();
  Spawn();
  return WaitReady(timeout);
}

std::string ServerProcess::admin_token() const {
  std::ifstream in(dir_ + "/admin-token");
  std::string token;
  in >> token;
  if (token.empty()) throw std::runtime_error("no admin token in " + dir_);
  return token;
}

double ServerProcess::PeakRssMib() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      double kib = 0;
      fields >> kib;
      return kib / 1024.0;
    }
  }
  return 0;
}

double OwnCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

ServerProcess::CpuTime ServerProcess::Cpu() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string stat;
  std::getline(in, stat);
  // The command name (field 2) may hold spaces: fields are counted after
  // its closing parenthesis. utime and stime are fields 14 and 15.
  const size_t name_end = stat.rfind(')');
  if (name_end == std::string::npos) throw std::runtime_error("cannot read /proc stat of server");
  std::istringstream fields(stat.substr(name_end + 2));
  std::string field;
  for (int i = 3; i < 14; ++i) fields >> field;
  double utime = 0;
  double stime = 0;
  fields >> utime >> stime;
  const auto ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return {utime / ticks, stime / ticks};
}

}  // namespace berth::bench
