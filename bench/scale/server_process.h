// A `berth server` child process for benchmarks: started from a TOML
// configuration with its output in a log file, stopped by its PID only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

namespace berth::bench {

class ServerProcess {
 public:
  // Starts `berth server --config <dir>/berth.toml` listening on a free
  // loopback port, with its data (SQLite, admin token) in `dir`, and waits
  // until /readyz answers 200. `extra_toml` is appended to the configuration.
  // Throws std::runtime_error when it does not come up within `timeout`.
  ServerProcess(const std::string& berth_binary, const std::string& dir,
                const std::string& extra_toml, std::chrono::seconds timeout);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // SIGTERM, then SIGKILL after `grace`; waits for the exit.
  void Stop(std::chrono::seconds grace = std::chrono::seconds(30));
  // Starts it again on the same port and data; returns the seconds from the
  // exec to the first 200 from /readyz (the store's recovery included).
  double Restart(std::chrono::seconds timeout);

  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  std::string admin_token() const;
  // The peak resident set (VmHWM) of the running process, in MiB.
  double PeakRssMib() const;
  // CPU time the running process has used so far, all its threads.
  struct CpuTime {
    double user_s = 0;
    double kernel_s = 0;
  };
  CpuTime Cpu() const;

 private:
  void Spawn();
  // Seconds until /readyz answers 200; throws after `timeout`.
  double WaitReady(std::chrono::seconds timeout) const;

  std::string binary_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// CPU seconds (user and kernel) this process has used, every thread: the
// benchmark's own clients, to set beside the server's.
double OwnCpuSeconds();

// A free TCP port on 127.0.0.1 (bound and released; racy only against
// other programs picking ports at the same moment).
int FreeLoopbackPort();

}  // namespace berth::bench
