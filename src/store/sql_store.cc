#include "store/sql_store.h"

#include <algorithm>
#include <array>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/job_state.h"
#include "store/record_json.h"

namespace berth::store {
namespace {

using core::JobId;
using nlohmann::json;

constexpr int64_t kMaxListLimit = 1000;

// Runs `body`, turning an escaping exception into Internal: no exception
// leaves a Store.
template <typename Body>
auto Guarded(std::string_view operation, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::exception& e) {
    return Internal(std::string(operation) + ": " + e.what());
  } catch (...) {
    return Internal(std::string(operation) + ": unknown exception");
  }
}

Status WithContext(const Status& status, const std::string& context) {
  if (status.ok()) return status;
  return Status(status.code(), context + ": " + status.message());
}

SqlValue OptionalId(const std::optional<JobId>& id) {
  if (!id) return SqlValue();
  return SqlValue(core::Value(*id));
}

SqlValue OptionalGpus(const std::optional<core::MilliGpu>& gpus) {
  if (!gpus) return SqlValue();
  return SqlValue(gpus->value());
}

SqlValue OptionalTime(const std::optional<core::Time>& time) {
  if (!time) return SqlValue();
  return SqlValue(time->micros());
}

// --- jobs: the queried fields in columns, the rest as JSON ---

constexpr std::string_view kJobColumns =
    "id, user_name, state, submit_time, array_parent, version, body";
// The keys of JobRecordToJson that live in columns instead of the body.
constexpr std::array<std::string_view, 6> kJobColumnKeys = {
    "id", "user", "state", "submit_time", "array_parent", "version"};

std::string JobBody(const JobRecord& job) {
  json body = JobRecordToJson(job);
  for (std::string_view key : kJobColumnKeys) body.erase(std::string(key));
  return body.dump();
}

Result<JobRecord> JobFromRow(const SqlRow& row) {
  BERTH_ASSIGN_OR_RETURN(const int64_t id, CellInt64(row, 0, "jobs.id"));
  const std::string context = "job " + std::to_string(id);
  BERTH_ASSIGN_OR_RETURN(std::string user, CellText(row, 1, "jobs.user_name"));
  BERTH_ASSIGN_OR_RETURN(std::string state, CellText(row, 2, "jobs.state"));
  BERTH_ASSIGN_OR_RETURN(const int64_t submit_time, CellInt64(row, 3, "jobs.submit_time"));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> parent,
                         CellOptionalInt64(row, 4, "jobs.array_parent"));
  BERTH_ASSIGN_OR_RETURN(const int64_t version, CellInt64(row, 5, "jobs.version"));
  BERTH_ASSIGN_OR_RETURN(std::string body_text, CellText(row, 6, "jobs.body"));
  json body = json::parse(body_text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return Internal(context + ": the stored body is not a JSON object");
  body["id"] = id;
  body["user"] = std::move(user);
  body["state"] = std::move(state);
  body["submit_time"] = submit_time;
  if (parent) body["array_parent"] = *parent;
  body["version"] = version;
  Result<JobRecord> job = JobRecordFromJson(body);
  if (!job.ok())
    return Internal(context + ": the stored record does not read: " + job.status().message());
  return job;
}

Result<std::vector<JobRecord>> JobsFromRows(const std::vector<SqlRow>& rows) {
  std::vector<JobRecord> jobs;
  jobs.reserve(rows.size());
  for (const SqlRow& row : rows) {
    BERTH_ASSIGN_OR_RETURN(JobRecord job, JobFromRow(row));
    jobs.push_back(std::move(job));
  }
  return jobs;
}

// One submission inside the writer's transaction. Resets `ids` first: the
// writer may run it twice (group_commit.h).
Status InsertSubmission(SqlConnection& db, const std::string& user, const std::string& key,
                        const std::vector<JobRecord>& jobs, std::vector<JobId>& ids) {
  ids.clear();
  if (!key.empty()) {
    // The primary key makes this the one place where two racing submissions
    // with one key meet: the second inserts nothing (on PostgreSQL it waits
    // for the first to commit) and answers with the first's ids.
    BERTH_ASSIGN_OR_RETURN(
        std::vector<SqlRow> claimed,
        db.Exec("INSERT INTO submissions (user_name, idempotency_key) VALUES ($1, $2)"
                " ON CONFLICT DO NOTHING RETURNING user_name",
                {user, key}));
    if (claimed.empty()) {
      BERTH_ASSIGN_OR_RETURN(std::vector<SqlRow> rows,
                             db.Exec("SELECT id FROM jobs WHERE user_name = $1 AND"
                                     " idempotency_key = $2 ORDER BY id",
                                     {user, key}));
      for (const SqlRow& row : rows) {
        BERTH_ASSIGN_OR_RETURN(const int64_t id, CellInt64(row, 0, "jobs.id"));
        ids.push_back(JobId(id));
      }
      return Status::Ok();
    }
  }
  const SqlValue key_value = key.empty() ? SqlValue() : SqlValue(key);
  for (size_t i = 0; i < jobs.size(); ++i) {
    JobRecord job = jobs[i];
    job.user = user;
    job.version = 1;
    if (jobs.size() > 1 && i > 0) job.array_parent = ids.front();
    BERTH_ASSIGN_OR_RETURN(
        std::vector<SqlRow> rows,
        db.Exec("INSERT INTO jobs (user_name, queue, state, submit_time, idempotency_key,"
                " array_parent, version, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
                " RETURNING id",
                {job.user, job.request.queue, std::string(core::JobStateName(job.state)),
                 job.submit_time.micros(), key_value, OptionalId(job.array_parent), job.version,
                 JobBody(job)}));
    if (rows.size() != 1) return Internal("jobs: INSERT returned no id");
    BERTH_ASSIGN_OR_RETURN(const int64_t id, CellInt64(rows[0], 0, "jobs.id"));
    ids.push_back(JobId(id));
  }
  return Status::Ok();
}

Status UpdateJob(SqlConnection& db, const JobRecord& job) {
  const int64_t id = core::Value(job.id);
  const std::vector<SqlValue> params = {id,
                                        job.user,
                                        job.request.queue,
                                        std::string(core::JobStateName(job.state)),
                                        job.submit_time.micros(),
                                        OptionalId(job.array_parent),
                                        JobBody(job),
                                        job.version};
  // SQLite rewrites the entry of every index on a column the SET names, even
  // to the same value: naming all five indexed columns wrote about 7 pages
  // per update instead of 3 (the row and jobs_by_state), and each page is
  // WAL written and later checkpointed. Only the state changes in practice,
  // so the first statement sets it alone, for a row whose other columns
  // already hold these values; the second writes them all.
  BERTH_ASSIGN_OR_RETURN(
      std::vector<SqlRow> rows,
      db.Exec("UPDATE jobs SET state = $4, body = $7, version = version + 1"
              " WHERE id = $1 AND version = $8 AND user_name = $2 AND queue = $3"
              " AND submit_time = $5 AND array_parent IS NOT DISTINCT FROM $6 RETURNING version",
              params));
  if (!rows.empty()) return Status::Ok();
  BERTH_ASSIGN_OR_RETURN(
      rows, db.Exec("UPDATE jobs SET user_name = $2, queue = $3, state = $4, submit_time = $5,"
                    " array_parent = $6, body = $7, version = version + 1"
                    " WHERE id = $1 AND version = $8 RETURNING version",
                    params));
  if (!rows.empty()) return Status::Ok();
  BERTH_ASSIGN_OR_RETURN(rows, db.Exec("SELECT version FROM jobs WHERE id = $1", {id}));
  if (rows.empty()) return NotFound("job " + std::to_string(id) + ": not found");
  BERTH_ASSIGN_OR_RETURN(const int64_t stored, CellInt64(rows[0], 0, "jobs.version"));
  return FailedPrecondition("job " + std::to_string(id) + ": version " +
                            std::to_string(job.version) + " is stale, the stored job is at " +
                            std::to_string(stored) + " (someone changed it; read it again)");
}

// --- tokens, nodes, queues, usage ---

Status InsertUsage(SqlConnection& db, const UsageRecord& usage) {
  const SqlValue peak_memory =
      usage.peak_memory ? SqlValue(usage.peak_memory->value()) : SqlValue();
  const SqlValue cpu_time = usage.cpu_time ? SqlValue(usage.cpu_time->micros()) : SqlValue();
  return WithContext(db.Exec("INSERT INTO usage_runs (job_id, user_name, queue, gpu_milli,"
                             " start_time, end_time, peak_memory_mib, cpu_time_us)"
                             " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                             {core::Value(usage.job), usage.user, usage.queue, usage.gpus.value(),
                              usage.start.micros(), usage.end.micros(), peak_memory, cpu_time})
                         .status(),
                     "usage of job " + core::ToString(usage.job));
}

constexpr std::string_view kTokenColumns =
    "id, hash, user_name, role, node, created, revoked, expires";

Result<TokenRecord> TokenFromRow(const SqlRow& row) {
  TokenRecord token;
  BERTH_ASSIGN_OR_RETURN(token.id, CellText(row, 0, "tokens.id"));
  BERTH_ASSIGN_OR_RETURN(token.hash, CellText(row, 1, "tokens.hash"));
  BERTH_ASSIGN_OR_RETURN(token.user, CellText(row, 2, "tokens.user_name"));
  BERTH_ASSIGN_OR_RETURN(const std::string role, CellText(row, 3, "tokens.role"));
  std::optional<Role> parsed = ParseRoleWord(role);
  if (!parsed) return Internal("token " + token.id + ": unknown role '" + role + "'");
  token.role = *parsed;
  BERTH_ASSIGN_OR_RETURN(token.node, CellText(row, 4, "tokens.node"));
  BERTH_ASSIGN_OR_RETURN(const int64_t created, CellInt64(row, 5, "tokens.created"));
  token.created = core::Time::FromMicros(created);
  BERTH_ASSIGN_OR_RETURN(const int64_t revoked, CellInt64(row, 6, "tokens.revoked"));
  token.revoked = revoked != 0;
  BERTH_ASSIGN_OR_RETURN(const std::optional<int64_t> expires,
                         CellOptionalInt64(row, 7, "tokens.expires"));
  if (expires) token.expires = core::Time::FromMicros(*expires);
  return token;
}

Result<NodeRecord> NodeFromRow(const SqlRow& row) {
  BERTH_ASSIGN_OR_RETURN(const std::string name, CellText(row, 0, "nodes.name"));
  BERTH_ASSIGN_OR_RETURN(const std::string body, CellText(row, 1, "nodes.body"));
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  Result<NodeRecord> node = NodeRecordFromJson(parsed);
  if (parsed.is_discarded() || !node.ok()) {
    return Internal("node " + name + ": the stored record does not read: " +
                    (parsed.is_discarded() ? "not JSON" : node.status().message()));
  }
  return node;
}

Result<core::QueueSpec> QueueFromRow(const SqlRow& row) {
  core::QueueSpec queue;
  BERTH_ASSIGN_OR_RETURN(queue.name, CellText(row, 0, "queues.name"));
  BERTH_ASSIGN_OR_RETURN(queue.parent, CellText(row, 1, "queues.parent"));
  BERTH_ASSIGN_OR_RETURN(const int64_t guaranteed, CellInt64(row, 2, "queues.guaranteed_milli"));
  queue.guaranteed = core::MilliGpu(guaranteed);
  BERTH_ASSIGN_OR_RETURN(const std::optional<int64_t> ceiling,
                         CellOptionalInt64(row, 3, "queues.ceiling_milli"));
  if (ceiling) queue.ceiling = core::MilliGpu(*ceiling);
  if (row.size() > 4 && row[4]) {
    const json parsed = json::parse(*row[4], nullptr, /*allow_exceptions=*/false);
    const Status read = parsed.is_discarded() ? InvalidArgument("not JSON")
                                              : QueueGovernanceFromJson(parsed, queue);
    if (!read.ok()) {
      return Internal("queue " + queue.name +
                      ": the stored governance does not read: " + read.message());
    }
  }
  return queue;
}

Result<UsageRecord> UsageFromRow(const SqlRow& row) {
  UsageRecord usage;
  BERTH_ASSIGN_OR_RETURN(const int64_t job, CellInt64(row, 0, "usage_runs.job_id"));
  usage.job = JobId(job);
  BERTH_ASSIGN_OR_RETURN(usage.user, CellText(row, 1, "usage_runs.user_name"));
  BERTH_ASSIGN_OR_RETURN(usage.queue, CellText(row, 2, "usage_runs.queue"));
  BERTH_ASSIGN_OR_RETURN(const int64_t gpus, CellInt64(row, 3, "usage_runs.gpu_milli"));
  usage.gpus = core::MilliGpu(gpus);
  BERTH_ASSIGN_OR_RETURN(const int64_t start, CellInt64(row, 4, "usage_runs.start_time"));
  usage.start = core::Time::FromMicros(start);
  BERTH_ASSIGN_OR_RETURN(const int64_t end, CellInt64(row, 5, "usage_runs.end_time"));
  usage.end = core::Time::FromMicros(end);
  BERTH_ASSIGN_OR_RETURN(const std::optional<int64_t> peak_memory,
                         CellOptionalInt64(row, 6, "usage_runs.peak_memory_mib"));
  if (peak_memory) usage.peak_memory = core::MemoryMiB(*peak_memory);
  BERTH_ASSIGN_OR_RETURN(const std::optional<int64_t> cpu_time,
                         CellOptionalInt64(row, 7, "usage_runs.cpu_time_us"));
  if (cpu_time) usage.cpu_time = core::Duration::Micros(*cpu_time);
  return usage;
}

// Reads every row of `rows` with `parse` into a vector.
template <typename T, typename Parse>
Result<std::vector<T>> ParseRows(const std::vector<SqlRow>& rows, Parse parse) {
  std::vector<T> out;
  out.reserve(rows.size());
  for (const SqlRow& row : rows) {
    Result<T> value = parse(row);
    if (!value.ok()) return value.status();
    out.push_back(std::move(value).value());
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Store>> SqlStore::Open(SqlStoreOptions options) {
  return Guarded("open store", [&]() -> Result<std::unique_ptr<Store>> {
    BERTH_ASSIGN_OR_RETURN(std::unique_ptr<SqlConnection> writer,
                           options.connect_writer ? options.connect_writer() : options.connect());
    BERTH_RETURN_IF_ERROR(MigrateSchema(*writer, options.dialect));
    return std::unique_ptr<Store>(new SqlStore(std::move(options), std::move(writer)));
  });
}

SqlStore::SqlStore(SqlStoreOptions options, std::unique_ptr<SqlConnection> writer)
    : options_(std::move(options)),
      writer_(
          std::make_unique<GroupCommitter>(std::move(writer), options_.dialect, options_.writer)) {}

SqlStore::~SqlStore() = default;

Result<std::unique_ptr<SqlConnection>> SqlStore::Borrow() {
  std::unique_lock lock(pool_mutex_);
  pool_returned_.wait(lock, [this] {
    return !idle_.empty() || open_readers_ < std::max<size_t>(options_.max_readers, 1);
  });
  if (!idle_.empty()) {
    std::unique_ptr<SqlConnection> connection = std::move(idle_.back());
    idle_.pop_back();
    return connection;
  }
  ++open_readers_;
  lock.unlock();
  Result<std::unique_ptr<SqlConnection>> connection = options_.connect();
  if (!connection.ok()) {
    lock.lock();
    --open_readers_;
    pool_returned_.notify_one();
  }
  return connection;
}

void SqlStore::GiveBack(std::unique_ptr<SqlConnection> connection) {
  {
    std::lock_guard lock(pool_mutex_);
    idle_.push_back(std::move(connection));
  }
  pool_returned_.notify_one();
}

Status SqlStore::Read(const ReadFn& read) {
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<SqlConnection> connection, Borrow());
  Status status;
  // A connection lost since its last use, or during this read, is reopened
  // once; a read has no effects, so running it again is safe.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (connection->broken()) {
      status = connection->Reconnect();
      if (!status.ok()) {
        status = Unavailable("database connection lost: " + status.message());
        break;
      }
    }
    try {
      status = read(*connection);
    } catch (const std::exception& e) {
      status = Internal(std::string("store read: ") + e.what());
    }
    if (status.ok() || !connection->broken()) break;
  }
  GiveBack(std::move(connection));
  return status;
}

// --- jobs ---

Result<std::vector<JobId>> SqlStore::SubmitJobs(const std::string& user,
                                                const std::string& idempotency_key,
                                                std::vector<JobRecord> jobs) {
  return Guarded("SubmitJobs", [&]() -> Result<std::vector<JobId>> {
    if (jobs.empty()) return InvalidArgument("jobs: a submission needs at least one job");
    std::vector<JobId> ids;
    BERTH_RETURN_IF_ERROR(writer_->Run(
        [&](SqlConnection& db) { return InsertSubmission(db, user, idempotency_key, jobs, ids); }));
    return ids;
  });
}

Result<JobRecord> SqlStore::GetJob(JobId id) {
  return Guarded("GetJob", [&]() -> Result<JobRecord> {
    std::optional<JobRecord> found;
    BERTH_RETURN_IF_ERROR(Read([&](SqlConnection& db) -> Status {
      found.reset();
      BERTH_ASSIGN_OR_RETURN(
          std::vector<SqlRow> rows,
          db.Exec("SELECT " + std::string(kJobColumns) + " FROM jobs WHERE id = $1",
                  {core::Value(id)}));
      if (rows.empty()) return Status::Ok();
      BERTH_ASSIGN_OR_RETURN(found, JobFromRow(rows[0]));
      return Status::Ok();
    }));
    if (!found) return NotFound("job " + core::ToString(id) + ": not found");
    return std::move(*found);
  });
}

Result<JobId> SqlStore::LastJobId() {
  return Guarded("LastJobId", [&]() -> Result<JobId> {
    int64_t last = 0;
    BERTH_RETURN_IF_ERROR(Read([&](SqlConnection& db) -> Status {
      BERTH_ASSIGN_OR_RETURN(std::vector<SqlRow> rows,
                             db.Exec("SELECT COALESCE(MAX(id), 0) FROM jobs", {}));
      BERTH_ASSIGN_OR_RETURN(last, CellInt64(rows.at(0), 0, "MAX(jobs.id)"));
      return Status::Ok();
    }));
    return JobId(last);
  });
}

Result<std::vector<JobRecord>> SqlStore::ListJobs(const JobFilter& filter) {
  return Guarded("ListJobs", [&]() -> Result<std::vector<JobRecord>> {
    if (filter.limit < 1) {
      return InvalidArgument("limit: must be at least 1, got " + std::to_string(filter.limit));
    }
    // Only fixed SQL fragments are joined here; every value is a parameter.
    std::vector<SqlValue> params;
    auto param = [&params](SqlValue value) {
      params.push_back(std::move(value));
      return "$" + std::to_string(params.size());
    };
    std::vector<std::string> conditions;
    if (filter.state) {
      conditions.push_back("state = " + param(std::string(core::JobStateName(*filter.state))));
    }
    if (filter.user) conditions.push_back("user_name = " + param(*filter.user));
    if (filter.queue) conditions.push_back("queue = " + param(*filter.queue));
    if (filter.live_only) {
      std::string ended;
      for (core::JobState state : {core::JobState::kSucceeded, core::JobState::kFailed,
                                   core::JobState::kCancelled, core::JobState::kTimeout}) {
        ended += (ended.empty() ? "" : ", ") + param(std::string(core::JobStateName(state)));
      }
      conditions.push_back("state NOT IN (" + ended + ")");
    }
    if (filter.after) conditions.push_back("id > " + param(core::Value(*filter.after)));
    std::string sql = "SELECT " + std::string(kJobColumns) + " FROM jobs";
    for (size_t i = 0; i < conditions.size(); ++i) {
      sql += (i == 0 ? " WHERE " : " AND ") + conditions[i];
    }
    sql += " ORDER BY id LIMIT " +
           param(std::min<int64_t>(static_cast<int64_t>(filter.limit), kMaxListLimit));

    std::vector<JobRecord> jobs;
    BERTH_RETURN_IF_ERROR(Read([&](SqlConnection& db) -> Status {
      BERTH_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, db.Exec(sql, params));
      BERTH_ASSIGN_OR_RETURN(jobs, JobsFromRows(rows));
      return Status::Ok();
    }));
    return jobs;
  });
}

Status SqlStore::UpdateJobs(const std::vector<JobRecord>& jobs) {
  return Guarded("UpdateJobs", [&]() -> Status {
    if (jobs.empty()) return Status::Ok();
    return writer_->Run([&](SqlConnection& db) -> Status {
      for (const JobRecord& job : jobs) BERTH_RETURN_IF_ERROR(UpdateJob(db, job));
      return Status::Ok();
    });
  });
}

std::shared_future<Status> SqlStore::QueueJobChanges(std::vector<JobRecord> jobs,
                                                     std::vector<UsageRecord> usage) {
  // Copies owned by the write: the caller goes on at once.
  return writer_->Queue([jobs = std::move(jobs), usage = std::move(usage)](SqlConnection& db) {
    return Guarded("QueueJobChanges", [&]() -> Status {
      for (const JobRecord& job : jobs) BERTH_RETURN_IF_ERROR(UpdateJob(db, job));
      for (const UsageRecord& run : usage) BERTH_RETURN_IF_ERROR(InsertUsage(db, run));
      return Status::Ok();
    });
  });
}

// --- tokens ---

Status SqlStore::PutToken(const TokenRecord& token) {
  return Guarded("PutToken", [&]() -> Status {
    Status status = writer_->Run([&](SqlConnection& db) {
      return db
          .Exec(
              "INSERT INTO tokens (" + std::string(kTokenColumns) +
                  ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
                  " ON CONFLICT (id) DO UPDATE SET hash = excluded.hash,"
                  " user_name = excluded.user_name, role = excluded.role,"
                  " node = excluded.node, created = excluded.created,"
                  " revoked = excluded.revoked, expires = excluded.expires",
              {token.id, token.hash, token.user, std::string(RoleWord(token.role)), token.node,
               token.created.micros(), int64_t{token.revoked ? 1 : 0}, OptionalTime(token.expires)})
          .status();
    });
    if (status.code() == StatusCode::kAlreadyExists) {
      return Status(StatusCode::kAlreadyExists,
                    "token " + token.id + ": another token has the same hash");
    }
    return WithContext(status, "token " + token.id);
  });
}

Result<TokenRecord> SqlStore::FindTokenByHash(const std::string& hash) {
  return Guarded("FindTokenByHash", [&]() -> Result<TokenRecord> {
    std::optional<TokenRecord> found;
    BERTH_RETURN_IF_ERROR(Read([&](SqlConnection& db) -> Status {
      found.reset();
      BERTH_ASSIGN_OR_RETURN(
          std::vector<SqlRow> rows,
          db.Exec("SELECT " + std::string(kTokenColumns) + " FROM tokens WHERE hash = $1", {hash}));
      if (rows.empty()) return Status::Ok();
      BERTH_ASSIGN_OR_RETURN(found, TokenFromRow(rows[0]));
      return Status::Ok();
    }));
    // The hash is a credential's fingerprint: keep it out of the message.
    if (!found) return NotFound("token: no token with that hash");
    return std::move(*found);
  });
}

Result<std::vector<TokenRecord>> SqlStore::ListTokens() {
  return Guarded("ListTokens", [&]() -> Result<std::vector<TokenRecord>> {
    std::vector<TokenRecord> tokens;
    BERTH_RETURN_IF_ERROR(Read([&](SqlConnection& db) -> Status {
      BERTH_ASSIGN_OR_RETURN(std::vector<SqlRow> rows,
                             db.Exec("SELECT " + std::string(kTokenColumns) + " FROM tokens", {}));
      BERTH_ASSIGN_OR_RETURN(tokens, ParseRows<TokenRecord>(rows, TokenFromRow));
      return Status::Ok();
    }));
    // Sorted here, not in SQL: PostgreSQL's text order follows the database's
    // locale, and listings must not depend on it.
    std::sort(tokens.begin(), tokens.end(),
              [](const TokenRecord& a, const TokenRecord& b) { return a.id < b.id; });
    return tokens;
  });
}

// --- nodes ---

Status SqlStore::PutNode(const NodeRecord& node) {
  return Guarded("PutNode", [&]() -> Status {
    const std::string body = NodeRecordToJson(node).dump();
    return WithContext(writer_->Run([&](SqlConnection& db) {
      return db
          .Exec(
              "INSERT INTO nodes (name, body) VALUES ($1, $2)"
              " ON CONFLICT (name) DO UPDATE SET body = excluded.body",
              {node.name, body})
          .status();
    }),
                       "node " + node.name);
  });
}

Result<std::vector<NodeRecord>> SqlStore::ListNodes() {
  return Guarded("ListNodes", [&]() -> Result<std::vector<NodeRecord>> {
    std::vector<NodeRecord> nodes;
    BERTH_RETURN_IF_ERROR(Read([&](SqlConnection& db) -> Status {
      BERTH_ASSIGN_OR_RETURN(std::vector<SqlRow> rows, db.Exec("SELECT name, body FROM nodes", {}));
      BERTH_ASSIGN_OR_RETURN(nodes, ParseRows<NodeRecord>(rows, NodeFromRow));
      return Status::Ok();
    }));
    std::sort(nodes.begin(), nodes.end(),
              [](const NodeRecord& a, const NodeRecord& b) { return a.name < b.name; });
    return nodes;
  });
}

// --- queues ---

Status SqlStore::PutQueues(const std::vector<core::QueueSpec>& queues) {
  return Guarded("PutQueues", [&]() -> Status {
    return WithContext(writer_->Run([&](SqlConnection& db) -> Status {
      BERTH_RETURN_IF_ERROR(db.Exec("DELETE FROM queues", {}).status());
      for (size_t i = 0; i < queues.size(); ++i) {
        const core::QueueSpec& queue = queues[i];
        BERTH_RETURN_IF_ERROR(WithContext(
            db.Exec("INSERT INTO queues (ordinal, name, parent, guaranteed_milli,"
                    " ceiling_milli, governance) VALUES ($1, $2, $3, $4, $5, $6)",
                    {static_cast<int64_t>(i), queue.name, queue.parent, queue.guaranteed.value(),
                     OptionalGpus(queue.ceiling), QueueGovernanceToJson(queue).dump()})
                .status(),
            "queue " + queue.name));
      }
      return Status::Ok();
    }),
                       "queues");
  });
}

Result<std::vector<core::QueueSpec>> SqlStore::ListQueues() {
  return Guarded("ListQueues", [&]() -> Result<std::vector<core::QueueSpec>> {
    std::vector<core::QueueSpec> queues;
    BERTH_RETURN_IF_ERROR(Read([&](SqlConnection& db) -> Status {
      BERTH_ASSIGN_OR_RETURN(
          std::vector<SqlRow> rows,
          db.Exec("SELECT name, parent, guaranteed_milli, ceiling_milli, governance FROM queues"
                  " ORDER BY ordinal",
                  {}));
      BERTH_ASSIGN_OR_RETURN(queues, ParseRows<core::QueueSpec>(rows, QueueFromRow));
      return Status::Ok();
    }));
    return queues;
  });
}

// --- usage ---

Result<std::vector<UsageRecord>> SqlStore::ListUsage(core::Time from, core::Time to) {
  return Guarded("ListUsage", [&]() -> Result<std::vector<UsageRecord>> {
    std::vector<UsageRecord> runs;
    BERTH_RETURN_IF_ERROR(Read([&](SqlConnection& db) -> Status {
      BERTH_ASSIGN_OR_RETURN(
          std::vector<SqlRow> rows,
          db.Exec("SELECT job_id, user_name, queue, gpu_milli, start_time, end_time,"
                  " peak_memory_mib, cpu_time_us FROM usage_runs WHERE start_time < $1 AND "
                  "end_time > $2"
                  " ORDER BY start_time, job_id, id",
                  {to.micros(), from.micros()}));
      BERTH_ASSIGN_OR_RETURN(runs, ParseRows<UsageRecord>(rows, UsageFromRow));
      return Status::Ok();
    }));
    return runs;
  });
}

}  // namespace berth::store
