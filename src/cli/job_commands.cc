// `berth queue | show | why | cancel | release | hold | update | requeue | signal |
// logs`.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cli/api_client.h"
#include "cli/client_commands.h"
#include "cli/submit_options.h"
#include "cli/table.h"
#include "protocol/signal_name.h"

namespace berth::cli {
namespace {

using nlohmann::json;

double NowSeconds() { return static_cast<double>(std::time(nullptr)); }

json GetOrExit(const std::string& command, const ApiClient& client, const std::string& path) {
  Result<json> reply = client.Get(path);
  if (!reply.ok()) Exit(command, reply.status());
  return std::move(*reply);
}

void PrintJson(const json& value) { std::printf("%s\n", value.dump(2).c_str()); }

// "resources, eta 14:05" for pending jobs, the nodes for running ones.
std::string Why(const json& job) {
  const std::string state = job.value("state", "");
  if (state == "pending" || state == "held") {
    std::string text = job.value("reason", "");
    if (const std::string eta = EtaSummary(job, ZoneName::kLeftOut); !eta.empty()) {
      text += (text.empty() ? "" : ", ") + eta;
    }
    return text;
  }
  std::string nodes;
  if (job["placement"].is_array()) {
    for (const json& task : job["placement"]) {
      const std::string node = task.value("node", "");
      if (nodes.find(node) == std::string::npos) nodes += (nodes.empty() ? "" : ",") + node;
    }
  }
  return nodes.empty() ? job.value("reason", "") : nodes;
}

struct QueueFlags {
  ClientFlags client;
  std::string state;
  std::string user;
  std::string queue;
  bool me = false;
  bool all = false;
};

void RunQueue(const QueueFlags& flags) {
  const ApiClient client = ConnectOrExit("queue", flags.client);
  std::string query = flags.all ? "" : "&live=true";
  std::string user = flags.user;
  if (flags.me) user = GetOrExit("queue", client, "/api/v1/whoami").value("user", "");
  if (!user.empty()) query += "&user=" + user;
  if (!flags.state.empty()) query += "&state=" + flags.state;
  if (!flags.queue.empty()) query += "&queue=" + flags.queue;
  json jobs = json::array();
  int64_t after = 0;
  while (true) {
    json page = GetOrExit("queue", client,
                          "/api/v1/jobs?limit=1000&after=" + std::to_string(after) + query);
    for (json& job : page["jobs"]) jobs.push_back(std::move(job));
    if (!page.contains("next_after")) break;
    after = page["next_after"].get<int64_t>();
  }
  if (flags.client.json) return PrintJson(jobs);
  Table table({"ID", "USER", "NAME", "STATE", "GPUS", "WAIT", "REASON/ETA/NODES"});
  for (const json& job : jobs) {
    const std::string state = job.value("state", "");
    double wait = 0;
    if (std::optional<core::Time> submitted = JsonTime(job["submit_time"])) {
      const std::optional<core::Time> started = JsonTime(job["start_time"]);
      const double until = started ? static_cast<double>(started->micros()) / 1e6 : NowSeconds();
      wait = until - static_cast<double>(submitted->micros()) / 1e6;
    }
    table.Add({{std::to_string(job.value("id", int64_t{0}))},
               {job.value("user", "")},
               {job.value("name", "")},
               {state, StateColor(state)},
               {GpuSummary(job)},
               {ShortDuration(wait)},
               {Why(job)}});
  }
  std::fputs(table.Render(ColorOutput()).c_str(), stdout);
}

std::string Field(const json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

void RunShow(const ClientFlags& flags, int64_t id) {
  const ApiClient client = ConnectOrExit("show", flags);
  const json job = GetOrExit("show", client, "/api/v1/jobs/" + std::to_string(id));
  if (flags.json) return PrintJson(job);
  for (const auto& [key, value] : job.items()) {
    // ETAs in their one format (the times as the API has them: --json).
    if (key == "eta_low" || key == "eta_high") continue;
    const std::string summary = key == "eta"         ? EtaSummary(job, ZoneName::kShown)
                                : key == "first_eta" ? FirstEtaSummary(value)
                                                     : "";
    std::printf("%-14s %s\n", (key + ":").c_str(),
                summary.empty() ? Field(value).c_str() : summary.c_str());
  }
}

void RunWhy(const ClientFlags& flags, int64_t id) {
  const ApiClient client = ConnectOrExit("why", flags);
  const json explained =
      GetOrExit("why", client, "/api/v1/jobs/" + std::to_string(id) + "/explain");
  if (flags.json) return PrintJson(explained);
  const json& job = explained["job"];
  const std::string state = job.value("state", "");
  std::printf("job %lld is %s", static_cast<long long>(id), state.c_str());
  if (const std::string reason = explained.value("reason", ""); !reason.empty()) {
    std::printf(" (%s)", reason.c_str());
  }
  std::printf("\n");
  if (const std::string message = explained.value("message", ""); !message.empty()) {
    std::printf("  why:       %s\n", ClauseLines(message, 13).c_str());
  }
  if (explained["position"].is_number()) {
    std::printf("  position:  %lld in the queue\n",
                static_cast<long long>(explained["position"].get<int64_t>() + 1));
  }
  if (explained["blocker"].is_number()) {
    std::printf("  blocked by: job %lld\n",
                static_cast<long long>(explained["blocker"].get<int64_t>()));
  }
  if (std::optional<core::Time> eta = JsonTime(explained["eta"])) {
    std::printf("  eta:       %s (in %s)\n", EtaSummary(explained, ZoneName::kShown).c_str(),
                ShortDuration(static_cast<double>(eta->micros()) / 1e6 - NowSeconds()).c_str());
  } else if (state == "pending") {
    std::printf("  eta:       unknown yet\n");
  }
}

void RunAction(const std::string& action, const ClientFlags& flags,
               const std::vector<int64_t>& ids) {
  const ApiClient client = ConnectOrExit(action, flags);
  int failures = 0;
  Status last;
  for (int64_t id : ids) {
    // Cancelling or releasing twice does what once does: safe to resend.
    Result<json> reply = client.Post("/api/v1/jobs/" + std::to_string(id) + "/" + action,
                                     json::object(), follow::Replay::kSafe);
    if (!reply.ok()) {
      ++failures;
      last = reply.status();
      std::fprintf(stderr, "berth %s: %s\n", action.c_str(), reply.status().message().c_str());
      if (reply.status().code() == StatusCode::kUnavailable) break;
    } else if (flags.json) {
      std::printf("%s\n", reply->dump().c_str());
    } else if (action == "checkpoint") {
      const std::optional<core::Time> at = JsonTime((*reply)["last_checkpoint"]);
      std::printf("job %lld: checkpoint recorded at %s\n", static_cast<long long>(id),
                  at ? ShortClock(*at).c_str() : "-");
    }
  }
  if (failures > 0) {
    std::exit(last.code() == StatusCode::kUnavailable ? kExitUnreachable : kExitRefused);
  }
}

struct SignalFlags {
  ClientFlags client;
  std::string signal;
  bool batch = false;
  std::vector<int64_t> ids;
};

// berth signal: a signal to running jobs' tasks (scancel --signal).
void RunSignal(const SignalFlags& flags) {
  const std::optional<std::string> name = protocol::CanonicalSignalName(flags.signal);
  if (!name) {
    Exit("signal", InvalidArgument("--signal: expected " + std::string(protocol::kSignalExpected) +
                                   ", got '" + flags.signal + "'"));
  }
  const ApiClient client = ConnectOrExit("signal", flags.client);
  int failures = 0;
  Status last;
  for (int64_t id : flags.ids) {
    // Never resent: a handler would run twice.
    Result<json> reply =
        client.Post("/api/v1/jobs/" + std::to_string(id) + "/signal",
                    json{{"signal", *name}, {"batch_only", flags.batch}}, follow::Replay::kUnsafe);
    if (!reply.ok()) {
      ++failures;
      last = reply.status();
      std::fprintf(stderr, "berth signal: %s\n", reply.status().message().c_str());
      if (reply.status().code() == StatusCode::kUnavailable) break;
    } else if (flags.client.json) {
      std::printf("%s\n", reply->dump().c_str());
    }
  }
  if (failures > 0) {
    std::exit(last.code() == StatusCode::kUnavailable ? kExitUnreachable : kExitRefused);
  }
}

struct UpdateFlags {
  ClientFlags client;
  int64_t id = 0;
  std::optional<std::string> time_limit;
  std::optional<std::string> queue;
  std::optional<std::string> priority;
};

// PATCH /api/v1/jobs/{id}: a waiting job's time limit, queue or priority.
void RunUpdate(const UpdateFlags& flags) {
  json body = json::object();
  if (flags.time_limit) {
    Result<int64_t> seconds = ParseDuration(*flags.time_limit, "--time-limit");
    if (!seconds.ok()) Exit("update", seconds.status());
    body["time_limit_s"] = *seconds;
  }
  if (flags.queue) body["queue"] = *flags.queue;
  if (flags.priority) {
    // A number, or a class name the server knows (low, normal, high).
    const std::string& text = *flags.priority;
    char* end = nullptr;
    const long long number = std::strtoll(text.c_str(), &end, 10);
    body["priority"] = !text.empty() && *end == '\0' ? json(number) : json(text);
  }
  if (body.empty()) {
    Exit("update", InvalidArgument("nothing to change: give --time-limit, --queue or --priority"));
  }
  const ApiClient client = ConnectOrExit("update", flags.client);
  Result<json> reply = client.Patch("/api/v1/jobs/" + std::to_string(flags.id), body);
  if (!reply.ok()) Exit("update", reply.status());
  if (flags.client.json) PrintJson(*reply);
}

struct LogsFlags {
  ClientFlags client;
  int64_t id = 0;
  int64_t task = 0;
  bool follow = false;
};

// The job's state, or Exit: "job 9999 does not exist" rather than waiting
// for the log of a job that never was.
std::string JobStateOrExit(const ApiClient& client, int64_t id) {
  Result<json> job = client.Get("/api/v1/jobs/" + std::to_string(id));
  if (!job.ok() && job.status().code() == StatusCode::kNotFound) {
    Exit("logs", NotFound("job " + std::to_string(id) + " does not exist"));
  }
  if (!job.ok()) Exit("logs", job.status());
  return job->value("state", "");
}

void RunLogs(const LogsFlags& flags) {
  const ApiClient client = ConnectOrExit("logs", flags.client);
  const std::string path = "/api/v1/jobs/" + std::to_string(flags.id) +
                           "/logs?task=" + std::to_string(flags.task) + "&offset=";
  int64_t offset = 0;
  while (true) {
    Result<RawReply> reply = client.GetRaw(path + std::to_string(offset));
    bool running = false;
    if (reply.ok()) {
      std::fwrite(reply->body.data(), 1, reply->body.size(), stdout);
      std::fflush(stdout);
      offset += static_cast<int64_t>(reply->body.size());
      running = reply->headers["X-Berth-Task-Running"] == "1";
    } else if (!flags.follow || reply.status().code() == StatusCode::kUnavailable ||
               reply.status().code() == StatusCode::kPermissionDenied ||
               reply.status().code() == StatusCode::kInvalidArgument) {
      Exit("logs", reply.status());
    } else if (EndedState(JobStateOrExit(client, flags.id))) {
      // No log yet and the job has ended (it never started, or its node
      // is gone): there will never be one.
      Exit("logs", reply.status());
    }
    if (!flags.follow) return;
    if (reply.ok() && !running && reply->body.empty()) {
      // Drained a task that is no longer running: done once the job ended.
      if (EndedState(JobStateOrExit(client, flags.id))) return;
    }
    if (!reply.ok() || reply->body.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
}

}  // namespace

void AddJobCommands(CLI::App& app) {
  auto queue = std::make_shared<QueueFlags>();
  CLI::App* queue_app = app.add_subcommand("queue", "List jobs: the live queue by default");
  queue_app->add_option("--state", queue->state, "Only jobs in this state");
  queue_app->add_option("--user", queue->user, "Only this user's jobs");
  queue_app->add_option("--queue", queue->queue, "Only this team queue");
  queue_app->add_flag("--me", queue->me, "Only my jobs");
  queue_app->add_flag("--all", queue->all, "Ended jobs too");
  AddClientFlags(*queue_app, queue->client);
  queue_app->callback([queue] { RunQueue(*queue); });

  auto show = std::make_shared<std::pair<ClientFlags, int64_t>>();
  CLI::App* show_app = app.add_subcommand("show", "Everything about one job");
  show_app->add_option("id", show->second, "Job id")->required();
  AddClientFlags(*show_app, show->first);
  show_app->callback([show] { RunShow(show->first, show->second); });

  auto why = std::make_shared<std::pair<ClientFlags, int64_t>>();
  CLI::App* why_app = app.add_subcommand("why", "Why a job waits, what blocks it, and its ETA");
  why_app->add_option("id", why->second, "Job id")->required();
  AddClientFlags(*why_app, why->first);
  why_app->callback([why] { RunWhy(why->first, why->second); });

  const std::map<std::string, std::string> actions = {
      {"cancel", "Cancel jobs (running ones get SIGTERM, then SIGKILL)"},
      {"release", "Release held jobs"},
      {"requeue",
       "Queue running jobs (stopped first) or ended ones again (the next run's "
       "BERTH_RESTART_COUNT and SLURM_RESTART_COUNT are one higher)"},
      {"hold", "Hold waiting jobs: they start only once released"},
      {"checkpoint",
       "Say running jobs saved a checkpoint now: a preemption then loses only the work since"},
  };
  for (const auto& [action, description] : actions) {
    auto flags = std::make_shared<std::pair<ClientFlags, std::vector<int64_t>>>();
    CLI::App* sub = app.add_subcommand(action, description);
    sub->add_option("ids", flags->second, "Job ids")->required();
    AddClientFlags(*sub, flags->first);
    sub->callback([flags, name = action] { RunAction(name, flags->first, flags->second); });
  }

  auto signal = std::make_shared<SignalFlags>();
  CLI::App* signal_app = app.add_subcommand(
      "signal",
      "Send a signal to running jobs: every process of their tasks, or with --batch "
      "task 0's main process (the batch shell)");
  signal_app->add_option("-s,--signal", signal->signal, "USR1, SIGUSR1 or 10")->required();
  signal_app->add_flag("-b,--batch", signal->batch, "Only task 0's main process");
  signal_app->add_option("ids", signal->ids, "Job ids")->required();
  AddClientFlags(*signal_app, signal->client);
  signal_app->callback([signal] { RunSignal(*signal); });
  auto update = std::make_shared<UpdateFlags>();
  CLI::App* update_app =
      app.add_subcommand("update", "Change a waiting job's time limit, queue or priority");
  update_app->add_option("id", update->id, "Job id")->required();
  update_app->add_option("--time-limit", update->time_limit,
                         "New time limit (as --time: 30m, 2h, HH:MM:SS, D-HH)");
  update_app->add_option("--queue", update->queue, "New queue (while it waits)");
  update_app->add_option("--priority", update->priority, "New priority (admins only)");
  AddClientFlags(*update_app, update->client);
  update_app->callback([update] { RunUpdate(*update); });

  auto logs = std::make_shared<LogsFlags>();
  CLI::App* logs_app = app.add_subcommand("logs", "A task's output (its own, unprefixed)");
  logs_app->add_option("id", logs->id, "Job id")->required();
  logs_app->add_option("--task", logs->task, "Task index (default 0)");
  logs_app->add_flag("-f,--follow", logs->follow, "Keep printing until the job ends");
  AddClientFlags(*logs_app, logs->client);
  logs_app->callback([logs] { RunLogs(*logs); });
}

}  // namespace berth::cli
