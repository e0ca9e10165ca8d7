// The scale benchmark: the real `berth server` process (SQLite store) driven
// by thousands of simulated agents over loopback HTTP, with a backlog of
// pending jobs. For each size it measures:
//
//   starts_per_s     a backlog of (nodes x 8 GPUs of work) + `pending` jobs is
//                    submitted before any node exists; then every node
//                    registers and heartbeats. Tasks that reached their
//                    agents / seconds from the first registration until 95%
//                    of the GPUs are busy.
//   decision_p50/99  with the cluster full and `pending` jobs waiting, for
//                    `--measure-s`: tasks end (their `sleep S` is up), as
//                    many new jobs arrive; the server's
//                    berth_event_to_decision_seconds histogram over that window
//                    (event arrival to the end of the first cycle that saw it).
//   full_pass_s      mean of berth_scheduler_full_pass_seconds over the window
//                    (cycles that order, reserve and plan an ETA for every
//                    pending job; one every explain_every_s).
//   cycle_parts      where the scheduler loop's time went over the window
//                    (berth_scheduler_cycle_part_seconds): p50, p99 and mean
//                    of each part in ms, and `busy`, the share of the window
//                    the loop spent in cycles (everything but its rest).
//   store_writer     the store's writer over the window, per transaction:
//                    its oldest write's wait for the writer, the transaction
//                    (writes and flush), writes per transaction, rate.
//   cpu_cores        cores busy over the window: the server's (user space,
//                    kernel) and the benchmark's own (agents, submits).
//   rss_mib          the server's peak RSS (VmHWM) after the window.
//   restart_s        SIGTERM, start again on the same store, until /readyz.
//
// Usage: scale_bench --berth PATH [--sizes 1000x10000,10000x100000]
//                    [--measure-s 60] [--out FILE] [--quick]
//                    [--database postgresql://...]  (an empty database, one size)
#include <httplib.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "api_client.h"
#include "prom_histogram.h"
#include "server_process.h"
#include "sim_fleet.h"

namespace {

using berth::bench::Bearer;
using berth::bench::FleetOptions;
using berth::bench::IssueTokens;
using berth::bench::OwnCpuSeconds;
using berth::bench::ParsePromHistogram;
using berth::bench::PostAll;
using berth::bench::PromHistogram;
using berth::bench::ServerProcess;
using berth::bench::SimFleet;
using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

constexpr int kGpusPerNode = 8;
constexpr int kUsers = 16;
constexpr int kClientThreads = 4;

struct Size {
  int nodes = 0;
  int pending = 0;
};

double Seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

// A job of the benchmark's mix: 1-8 GPUs, some 2-node gangs, 10 s to 10 min.
// The parts of berth_scheduler_cycle_part_seconds, in the loop's order.
constexpr std::array<const char*, 7> kCycleParts = {
    "queued", "rest", "heartbeat_check", "lock_wait", "decide", "persist", "apply"};

json RandomJob(std::mt19937& rng, int* gpus) {
  const int shape = static_cast<int>(rng() % 100);
  int per_task = 8;
  int tasks = 1;
  if (shape < 30) {
    per_task = 1;
  } else if (shape < 55) {
    per_task = 2;
  } else if (shape < 80) {
    per_task = 4;
  } else if (shape >= 95) {
    tasks = 2;
  }
  *gpus = per_task * tasks;
  const int seconds = std::uniform_int_distribution<int>(10, 600)(rng);
  return json{{"command", {"sleep", std::to_string(seconds)}},
              {"gpus", per_task},
              {"tasks", tasks},
              {"time_limit_s", 2 * seconds},
              {"queue", "q" + std::to_string(rng() % 4)}};
}

// Submits `jobs` round-robin over the users; returns jobs/s.
double SubmitAll(int port, const std::vector<std::string>& users, const std::vector<json>& jobs) {
  const auto start = SteadyClock::now();
  PostAll(port, "/api/v1/jobs", jobs.size(), kClientThreads, [&](size_t i) {
    return std::pair{users[i % users.size()], jobs[i]};
  });
  return static_cast<double>(jobs.size()) / Seconds(SteadyClock::now() - start);
}

// /metrics, read with the admin's token.
std::string Scrape(int port, const std::string& admin) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(std::chrono::seconds(60));
  auto result = client.Get("/metrics", Bearer(admin));
  if (!result || result->status != 200) throw std::runtime_error("GET /metrics failed");
  return result->body;
}

int64_t PendingJobs(const std::string& metrics) {
  int64_t pending = 0;
  std::istringstream lines(metrics);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("berth_jobs{", 0) == 0 && line.find("state=\"pending\"") != std::string::npos) {
      pending += std::stoll(line.substr(line.rfind(' ') + 1));
    }
  }
  return pending;
}

// `database`: a PostgreSQL URL for the store instead of SQLite (empty: SQLite).
json RunSize(const std::string& berth, const Size& size, double measure_s,
             const std::string& database) {
  char pattern[] = "/tmp/berth-scale-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
  const std::string dir = pattern;
  // Agents of 10k nodes heartbeat every 5 s (2,000 heartbeats/s in all).
  const auto interval = std::chrono::milliseconds(std::max(1000, size.nodes / 2));
  const std::string toml = (database.empty() ? "" : "database = \"" + database + "\"\n") +
                           "[scheduler]\npolicy = \"berth\"\nheartbeat_timeout_s = " +
                           std::to_string(std::max<int64_t>(30, 6 * interval.count() / 1000)) +
                           "\n";
  std::fprintf(stderr, "[%d nodes, %d pending] server in %s\n", size.nodes, size.pending,
               dir.c_str());
  ServerProcess server(berth, dir, toml, std::chrono::seconds(60));
  const std::string admin = server.admin_token();

  const std::vector<std::string> users = IssueTokens(server.port(), admin, kUsers, [](int i) {
    return json{{"user", "user" + std::to_string(i)}, {"role", "user"}};
  });
  const auto tokens_start = SteadyClock::now();
  const std::vector<std::string> agents = IssueTokens(server.port(), admin, size.nodes, [](int i) {
    return json{{"user", "agent"}, {"role", "agent"}, {"node", SimFleet::NodeName(i)}};
  });
  std::fprintf(stderr, "  %d agent tokens in %.1f s\n", size.nodes,
               Seconds(SteadyClock::now() - tokens_start));

  // The backlog: enough to fill every GPU, then `pending` more.
  std::mt19937 rng(1);
  std::vector<json> jobs;
  int64_t fill_gpus = 0;
  while (fill_gpus < static_cast<int64_t>(size.nodes) * kGpusPerNode) {
    int gpus = 0;
    jobs.push_back(RandomJob(rng, &gpus));
    fill_gpus += gpus;
  }
  const size_t fill_jobs = jobs.size();
  for (int i = 0; i < size.pending; ++i) {
    int gpus = 0;
    jobs.push_back(RandomJob(rng, &gpus));
  }
  const double submit_rate = SubmitAll(server.port(), users, jobs);
  std::fprintf(stderr, "  %zu jobs submitted at %.0f jobs/s\n", jobs.size(), submit_rate);

  FleetOptions fleet_options;
  fleet_options.port = server.port();
  fleet_options.nodes = size.nodes;
  fleet_options.gpus_per_node = kGpusPerNode;
  fleet_options.heartbeat_interval = interval;
  // Real agents heartbeat each on its own connection, all at once; a thread
  // of the fleet heartbeats its nodes one after another. One thread per 500
  // nodes (20 at 10k nodes, 100 heartbeats/s each) keeps a heartbeat's
  // answer, which waits for the store's flush, from holding back the next
  // node's report by more than the interval allows.
  fleet_options.threads = std::clamp(size.nodes / 500, 4, 32);
  SimFleet fleet(fleet_options, agents);
  const auto fleet_start = SteadyClock::now();
  fleet.Start();
  const int64_t capacity = static_cast<int64_t>(size.nodes) * kGpusPerNode;
  while (fleet.busy_gpus() < capacity * 95 / 100) {
    if (SteadyClock::now() - fleet_start > std::chrono::minutes(5)) {
      throw std::runtime_error("the cluster did not fill within 5 minutes");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double fill_s = Seconds(SteadyClock::now() - fleet_start);
  const int64_t fill_starts = fleet.starts();
  std::fprintf(stderr, "  %lld starts (%zu jobs fill the GPUs) in %.1f s\n",
               static_cast<long long>(fill_starts), fill_jobs, fill_s);

  // Jobs of the backlog started beside the fill: top the queue up to
  // `pending` (again while jobs still start as they arrive).
  for (int round = 0; round < 3; ++round) {
    const int64_t short_by = size.pending - PendingJobs(Scrape(server.port(), admin));
    if (short_by <= size.pending / 100) break;
    std::vector<json> more;
    for (int64_t i = 0; i < short_by; ++i) {
      int gpus = 0;
      more.push_back(RandomJob(rng, &gpus));
    }
    SubmitAll(server.port(), users, more);
  }

  // Steady state: tasks end and as many new jobs arrive (every 100 ms, one
  // per task that ended, at least one), so the queue stays near `pending`.
  const std::string before = Scrape(server.port(), admin);
  const ServerProcess::CpuTime server_cpu_before = server.Cpu();
  const double bench_cpu_before = OwnCpuSeconds();
  const auto window_start = SteadyClock::now();
  std::atomic<bool> trickling{true};
  std::thread trickle([&] {
    httplib::Client client("127.0.0.1", server.port());
    client.set_keep_alive(true);
    client.set_tcp_nodelay(true);
    std::mt19937 trickle_rng(2);
    int64_t seen_exits = fleet.exits();
    for (size_t i = 0; trickling;) {
      const int64_t exits = fleet.exits();
      for (int64_t n = std::max<int64_t>(1, exits - seen_exits); n > 0; --n, ++i) {
        int gpus = 0;
        client.Post("/api/v1/jobs", Bearer(users[i % users.size()]),
                    RandomJob(trickle_rng, &gpus).dump(), "application/json");
      }
      seen_exits = exits;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const int64_t exits_before = fleet.exits();
  std::this_thread::sleep_for(std::chrono::duration<double>(measure_s));
  trickling = false;
  trickle.join();
  const std::string after = Scrape(server.port(), admin);
  const ServerProcess::CpuTime server_cpu_after = server.Cpu();
  const double bench_cpu_after = OwnCpuSeconds();
  // Longer than `measure_s`: the trickle finishes the submits it began.
  const double window_s = Seconds(SteadyClock::now() - window_start);
  // Cores busy over the window: the server's in user space and in the
  // kernel, and this process's (the simulated agents and the submits).
  const json cpu_cores{
      {"server_user", (server_cpu_after.user_s - server_cpu_before.user_s) / window_s},
      {"server_kernel", (server_cpu_after.kernel_s - server_cpu_before.kernel_s) / window_s},
      {"fleet", (bench_cpu_after - bench_cpu_before) / window_s}};
  const int64_t window_exits = fleet.exits() - exits_before;
  const PromHistogram decisions =
      ParsePromHistogram(after, "berth_event_to_decision_seconds")
          .Since(ParsePromHistogram(before, "berth_event_to_decision_seconds"));
  const PromHistogram full =
      ParsePromHistogram(after, "berth_scheduler_full_pass_seconds")
          .Since(ParsePromHistogram(before, "berth_scheduler_full_pass_seconds"));
  // A histogram of seconds over the window, in ms.
  auto window_ms = [&](const std::string& name, const std::string& labels = "") {
    const PromHistogram h =
        ParsePromHistogram(after, name, labels).Since(ParsePromHistogram(before, name, labels));
    return json{{"p50_ms", h.Quantile(0.5).value_or(0) * 1000},
                {"p99_ms", h.Quantile(0.99).value_or(0) * 1000},
                {"mean_ms", h.Mean().value_or(0) * 1000},
                {"count", h.count},
                {"total_s", h.sum}};
  };
  json parts = json::object();
  double busy_s = 0;
  for (const char* part : kCycleParts) {
    parts[part] =
        window_ms("berth_scheduler_cycle_part_seconds", std::string("part=\"") + part + "\"");
    if (std::string_view(part) != "queued" && std::string_view(part) != "rest") {
      busy_s += parts[part]["total_s"].get<double>();
    }
  }
  parts["busy"] = busy_s / window_s;
  const PromHistogram batch_writes =
      ParsePromHistogram(after, "berth_store_transaction_writes")
          .Since(ParsePromHistogram(before, "berth_store_transaction_writes"));
  const json store_writer{{"write_wait", window_ms("berth_store_write_wait_seconds")},
                          {"transaction", window_ms("berth_store_transaction_seconds")},
                          {"writes_per_transaction", batch_writes.Mean().value_or(0)},
                          {"transactions_per_s", batch_writes.count / window_s}};
  const double rss = server.PeakRssMib();
  const int64_t pending_now = PendingJobs(after);
  const int64_t failures = fleet.failures();
  fleet.Stop();

  const double restart = server.Restart(std::chrono::seconds(120));
  server.Stop();
  std::filesystem::remove_all(dir);

  json out{{"nodes", size.nodes},
           {"pending", size.pending},
           {"pending_measured", pending_now},
           {"decision_p50_ms", decisions.Quantile(0.5).value_or(0) * 1000},
           {"decision_p99_ms", decisions.Quantile(0.99).value_or(0) * 1000},
           {"decisions", decisions.count},
           {"full_pass_s", full.Mean().value_or(0)},
           {"full_passes", full.count},
           {"cycle_parts", parts},
           {"store_writer", store_writer},
           {"cpu_cores", cpu_cores},
           {"rss_mib", rss},
           {"restart_s", restart},
           {"starts_per_s", static_cast<double>(fill_starts) / fill_s},
           {"fill_s", fill_s},
           {"submit_jobs_per_s", submit_rate},
           {"heartbeat_interval_s", static_cast<double>(interval.count()) / 1000},
           {"window_s", window_s},
           {"window_task_exits", window_exits},
           {"agent_failures", failures}};
  std::fprintf(stderr, "  %s\n", out.dump().c_str());
  return out;
}

// "NODESxPENDING": at least one node, any pending.
Size ParseSize(const std::string& text) {
  Size size;
  const char* end = text.data() + text.size();
  const auto [x, nodes_error] = std::from_chars(text.data(), end, size.nodes);
  if (nodes_error == std::errc() && x < end && *x == 'x') {
    const auto [last, pending_error] = std::from_chars(x + 1, end, size.pending);
    if (pending_error == std::errc() && last == end && size.nodes > 0 && size.pending >= 0) {
      return size;
    }
  }
  throw std::invalid_argument("--sizes: expected NODESxPENDING such as 1000x10000, got '" + text +
                              "'");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"scale_bench: berth server with thousands of simulated agents"};
  std::string berth;
  std::string out_path;
  std::vector<std::string> size_texts = {"1000x10000", "10000x100000"};
  double measure_s = 60;
  bool quick = false;
  std::string database;
  app.add_option("--berth", berth, "the berth binary")->required();
  app.add_option("--sizes", size_texts, "NODESxPENDING, one run each")->delimiter(',');
  app.add_option("--measure-s", measure_s, "the measured window, seconds")
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--out", out_path, "write the results here (JSON)");
  app.add_flag("--quick", quick, "20 nodes x 200 pending, 5 s window (CI smoke)");
  app.add_option("--database", database,
                 "PostgreSQL URL for the store instead of SQLite: an empty database, one size");
  CLI11_PARSE(app, argc, argv);
  std::vector<Size> sizes;
  try {
    for (const std::string& text : size_texts) sizes.push_back(ParseSize(text));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "scale_bench: %s\n", error.what());
    return 2;
  }
  if (quick) {
    sizes = {{20, 200}};
    measure_s = 5;
  }
  if (!database.empty() && sizes.size() != 1) {
    std::fprintf(stderr,
                 "scale_bench: --database: one size per run (each needs an empty "
                 "database), got %zu\n",
                 sizes.size());
    return 2;
  }
  json results = json::array();
  try {
    for (const Size& size : sizes) results.push_back(RunSize(berth, size, measure_s, database));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "scale_bench: %s\n", error.what());
    return 1;
  }
  std::printf("%7s %8s %9s %9s %10s %8s %9s %9s %9s\n", "nodes", "pending", "dec_p50", "dec_p99",
              "full_pass", "rss", "restart", "starts", "submit");
  std::printf("%7s %8s %9s %9s %10s %8s %9s %9s %9s\n", "", "", "(ms)", "(ms)", "(s)", "(MiB)",
              "(s)", "(/s)", "(/s)");
  for (const json& r : results) {
    std::printf("%7d %8d %9.2f %9.2f %10.3f %8.0f %9.2f %9.0f %9.0f\n", r["nodes"].get<int>(),
                r["pending"].get<int>(), r["decision_p50_ms"].get<double>(),
                r["decision_p99_ms"].get<double>(), r["full_pass_s"].get<double>(),
                r["rss_mib"].get<double>(), r["restart_s"].get<double>(),
                r["starts_per_s"].get<double>(), r["submit_jobs_per_s"].get<double>());
  }
  std::printf("\nscheduler loop, p50 / p99 (ms) of each part per cycle\n%7s", "nodes");
  for (const char* part : kCycleParts) std::printf(" %15s", part);
  std::printf(" %5s\n", "busy");
  for (const json& r : results) {
    std::printf("%7d", r["nodes"].get<int>());
    for (const char* part : kCycleParts) {
      const json& figures = r["cycle_parts"][part];
      std::printf(" %7.2f/%7.2f", figures["p50_ms"].get<double>(), figures["p99_ms"].get<double>());
    }
    std::printf(" %4.0f%%\n", r["cycle_parts"]["busy"].get<double>() * 100);
  }
  std::printf("\nstore writer, p50 / p99 (ms) per transaction\n%7s %15s %15s %8s %8s\n", "nodes",
              "write_wait", "transaction", "writes", "txn/s");
  for (const json& r : results) {
    const json& w = r["store_writer"];
    std::printf("%7d %7.2f/%7.2f %7.2f/%7.2f %8.1f %8.0f\n", r["nodes"].get<int>(),
                w["write_wait"]["p50_ms"].get<double>(), w["write_wait"]["p99_ms"].get<double>(),
                w["transaction"]["p50_ms"].get<double>(), w["transaction"]["p99_ms"].get<double>(),
                w["writes_per_transaction"].get<double>(), w["transactions_per_s"].get<double>());
  }
  std::printf("\ncores busy over the window\n%7s %12s %14s %8s\n", "nodes", "server_user",
              "server_kernel", "fleet");
  for (const json& r : results) {
    const json& c = r["cpu_cores"];
    std::printf("%7d %12.2f %14.2f %8.2f\n", r["nodes"].get<int>(), c["server_user"].get<double>(),
                c["server_kernel"].get<double>(), c["fleet"].get<double>());
  }
  if (!out_path.empty()) {
    std::ofstream out(out_path);
    out << results.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "scale_bench: cannot write %s\n", out_path.c_str());
      return 1;
    }
  }
  return 0;
}
