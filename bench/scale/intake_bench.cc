// The intake benchmark: how many jobs a real `berth server` (SQLite store,
// synchronous=FULL: every acknowledged job is on disk) accepts per second,
// and how long each acknowledgement takes, from 1 to many concurrent
// clients. Each client is a thread with one kept-alive connection that
// submits held jobs (so scheduling does not blur it) one after another, as
// fast as the answers come; concurrent submits share group commits. Each
// client count runs on a fresh server and store, and reports the CPU each
// job cost the server (user space and kernel apart) and the clients: on one
// machine, their sum bounds the rate its CPUs allow.
//
// With --port it measures a server that is already running instead (the
// Slurm comparison's API intake, bench/vs_slurm.py: one token for every
// client, the jobs stay in that server's queue) and writes the results as
// JSON on stdout.
//
// Usage: intake_bench --berth PATH [--clients 1,8,64] [--jobs 20000]
//                     [--out FILE] [--quick]
//        intake_bench --port PORT --token TOKEN [--clients 1,8] [--jobs N]
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "api_client.h"
#include "server_process.h"

namespace {

using berth::bench::IssueTokens;
using berth::bench::OwnCpuSeconds;
using berth::bench::PostAll;
using berth::bench::ServerProcess;
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

double Quantile(std::vector<double> sorted, double q) {
  if (sorted.empty()) return 0;
  std::sort(sorted.begin(), sorted.end());
  const auto rank = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(rank, sorted.size() - 1)];
}

// `jobs` held submissions to the server on `port` from `clients` kept-alive
// connections, client i with tokens[i % tokens.size()].
json Measure(int port, const std::vector<std::string>& tokens, int clients, int jobs) {
  const json body{
      {"command", {"true"}}, {"gpus", 1}, {"time_limit_s", 60}, {"hold", true}, {"name", "intake"}};
  std::vector<double> ack_ms(static_cast<size_t>(jobs));
  std::vector<SteadyClock::time_point> sent(static_cast<size_t>(jobs));
  const auto start = SteadyClock::now();
  PostAll(
      port, "/api/v1/jobs", ack_ms.size(), clients,
      [&](size_t i) {
        sent[i] = SteadyClock::now();
        return std::pair{tokens[i % tokens.size()], body};
      },
      [&](size_t i, const std::string&) {
        ack_ms[i] = std::chrono::duration<double, std::milli>(SteadyClock::now() - sent[i]).count();
      });
  const double wall = std::chrono::duration<double>(SteadyClock::now() - start).count();
  return {{"clients", clients},
          {"jobs", jobs},
          {"wall_s", wall},
          {"jobs_per_s", jobs / wall},
          {"ack_p50_ms", Quantile(ack_ms, 0.50)},
          {"ack_p99_ms", Quantile(ack_ms, 0.99)},
          {"ack_max_ms", Quantile(ack_ms, 1.0)}};
}

json RunClients(const std::string& berth, int clients, int jobs) {
  char pattern[] = "/tmp/berth-intake-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
  const std::string dir = pattern;
  json out;
  {  // on a failure the folder stays: the error names its server.log
    ServerProcess server(berth, dir, "", std::chrono::seconds(60));
    const std::vector<std::string> users =
        IssueTokens(server.port(), server.admin_token(), std::min(clients, 16), [](int i) {
          return json{{"user", "user" + std::to_string(i)}, {"role", "user"}};
        });
    // While Measure runs, this process's CPU is the clients'.
    const ServerProcess::CpuTime server_before = server.Cpu();
    const double clients_before = OwnCpuSeconds();
    out = Measure(server.port(), users, clients, jobs);
    const double clients_after = OwnCpuSeconds();
    const ServerProcess::CpuTime server_after = server.Cpu();
    const double per_job_us = 1e6 / jobs;
    out["server_user_us_per_job"] = (server_after.user_s - server_before.user_s) * per_job_us;
    out["server_kernel_us_per_job"] = (server_after.kernel_s - server_before.kernel_s) * per_job_us;
    out["clients_cpu_us_per_job"] = (clients_after - clients_before) * per_job_us;
    out["server_peak_rss_mib"] = server.PeakRssMib();
    server.Stop();
  }
  std::filesystem::remove_all(dir);
  std::fprintf(stderr, "  %s\n", out.dump().c_str());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"intake_bench: jobs/s and ack latency of berth server from concurrent clients"};
  std::string berth;
  std::string out_path;
  std::vector<int> clients = {1, 8, 64};
  int jobs = 20'000;
  bool quick = false;
  int port = 0;
  std::string token;
  auto* berth_option = app.add_option("--berth", berth, "the berth binary: a server per run");
  auto* port_option = app.add_option("--port", port, "instead, a server already on 127.0.0.1:PORT")
                          ->check(CLI::Range(1, 65535))
                          ->excludes(berth_option);
  app.add_option("--token", token, "with --port: the token every client submits with")
      ->needs(port_option);
  app.add_option("--clients", clients, "client counts, one run each")
      ->delimiter(',')
      ->check(CLI::Range(1, 1'000'000));
  app.add_option("--jobs", jobs, "jobs per run")->check(CLI::Range(1, 1'000'000));
  app.add_option("--out", out_path, "write the results here (JSON)");
  app.add_flag("--quick", quick, "1 and 4 clients, 200 jobs (CI smoke; figures mean nothing)");
  CLI11_PARSE(app, argc, argv);
  if (berth.empty() && port == 0) {
    std::fprintf(stderr, "intake_bench: --berth or --port is required\n");
    return 2;
  }
  if (port != 0 && token.empty()) {
    std::fprintf(stderr, "intake_bench: --port needs --token\n");
    return 2;
  }
  if (quick) {
    clients = {1, 4};
    jobs = 200;
  }
  json results = json::array();
  try {
    for (int count : clients) {
      results.push_back(port != 0 ? Measure(port, {token}, count, jobs)
                                  : RunClients(berth, count, jobs));
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "intake_bench: %s\n", error.what());
    return 1;
  }
  if (port != 0) {  // for a program to read
    std::printf("%s\n", results.dump().c_str());
    return 0;
  }
  // CPU columns: microseconds per job of the server in user space and in
  // the kernel, and of the clients.
  std::printf("%8s %8s %10s %10s %10s %10s %10s %10s %10s\n", "clients", "jobs", "jobs/s",
              "ack_p50", "ack_p99", "ack_max", "srv_user", "srv_kern", "clients");
  std::printf("%8s %8s %10s %10s %10s %10s %10s %10s %10s\n", "", "", "", "(ms)", "(ms)", "(ms)",
              "(us/job)", "(us/job)", "(us/job)");
  for (const json& r : results) {
    std::printf("%8d %8d %10.0f %10.2f %10.2f %10.2f %10.1f %10.1f %10.1f\n",
                r["clients"].get<int>(), r["jobs"].get<int>(), r["jobs_per_s"].get<double>(),
                r["ack_p50_ms"].get<double>(), r["ack_p99_ms"].get<double>(),
                r["ack_max_ms"].get<double>(), r["server_user_us_per_job"].get<double>(),
                r["server_kernel_us_per_job"].get<double>(),
                r["clients_cpu_us_per_job"].get<double>());
  }
  if (!out_path.empty()) {
    std::ofstream out(out_path);
    out << results.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "intake_bench: cannot write %s\n", out_path.c_str());
      return 1;
    }
  }
  return 0;
}
