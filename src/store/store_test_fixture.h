// The fixture of the Store suite: the two backends on real databases
// (SQLite in a fresh temp dir, PostgreSQL in a fresh schema per test on the
// server named by BERTH_TEST_PG_URL), the typed fixture StoreTest and the
// helpers the tests share.
#pragma once

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <latch>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/postgres_store.h"
#include "store/record_json.h"
#include "store/schema.h"
#include "store/sql_connection.h"
#include "store/sqlite_store.h"
#include "store/store.h"
#include "store/store_test_records.h"

namespace berth::store::store_testing {

namespace fs = std::filesystem;
using core::JobId;
using core::JobState;

inline std::string RandomHex() {
  std::random_device device;
  std::mt19937_64 random((static_cast<uint64_t>(device()) << 32) ^ device());
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) out += kDigits[random() % 16];
  return out;
}

// --- backends: where each implementation's database lives for one test ---

class SqliteBackend {
 public:
  static std::string Name() { return "Sqlite"; }
  SqliteBackend() = default;
  SqliteBackend(const SqliteBackend&) = delete;
  SqliteBackend& operator=(const SqliteBackend&) = delete;
  ~SqliteBackend() {
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }

  Status SetUp() {
    dir_ = fs::temp_directory_path() / ("berth-store-test-" + RandomHex());
    std::error_code error;
    if (!fs::create_directories(dir_, error)) {
      return Unavailable("cannot create " + dir_.string() + ": " + error.message());
    }
    path_ = (dir_ / "berth.db").string();
    return Status::Ok();
  }
  Result<std::unique_ptr<Store>> Open() { return OpenSqliteStore(path_); }
  Result<std::unique_ptr<SqlConnection>> Raw() {
    BERTH_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConnection> connection,
                           SqliteConnection::Open(path_));
    return std::unique_ptr<SqlConnection>(std::move(connection));
  }

 private:
  fs::path dir_;
  std::string path_;
};

constexpr const char* kNoPostgresMessage =
    "BERTH_TEST_PG_URL is not set. The PostgreSQL store tests need a real server and are "
    "never skipped. Start a private one (PostgreSQL 15, loopback only) and export its URL "
    "with\n"
    "    eval \"$(scripts/test-postgres.sh start)\"\n"
    "then run the tests, and stop it with `scripts/test-postgres.sh stop`. scripts/test.sh "
    "does all of this.";

// A libpq keyword/value string: the test server's URL with this test's
// schema first on the search path, and the schema's name as the application
// name (so a test can find its own connections in pg_stat_activity).
inline Result<std::string> ConnInfoForSchema(const std::string& url, const std::string& schema) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  if (options == nullptr) {
    std::string message = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    return InvalidArgument("BERTH_TEST_PG_URL: " + message);
  }
  auto quoted = [](const std::string& value) {
    std::string out = "'";
    for (char c : value) {
      if (c == '\'' || c == '\\') out += '\\';
      out += c;
    }
    return out + "'";
  };
  std::string conninfo;
  std::string extra_options;
  for (PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val == nullptr) continue;
    const std::string keyword = option->keyword;
    if (keyword == "options") {
      extra_options = std::string(option->val) + " ";
    } else if (keyword != "application_name") {
      conninfo += keyword + "=" + quoted(option->val) + " ";
    }
  }
  PQconninfoFree(options);
  conninfo += "options=" + quoted(extra_options + "-c search_path=" + schema) + " ";
  conninfo += "application_name=" + quoted(schema);
  return conninfo;
}

class PostgresBackend {
 public:
  static std::string Name() { return "Postgres"; }
  PostgresBackend() = default;
  PostgresBackend(const PostgresBackend&) = delete;
  PostgresBackend& operator=(const PostgresBackend&) = delete;
  ~PostgresBackend() {
    if (admin_ == nullptr) return;
    if (!schema_.empty()) (void)Admin("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE", {});
    PQfinish(admin_);
  }

  Status SetUp() {
    const char* url = std::getenv("BERTH_TEST_PG_URL");
    if (url == nullptr || *url == '\0') return FailedPrecondition(kNoPostgresMessage);
    admin_ = PQconnectdb(url);
    if (PQstatus(admin_) != CONNECTION_OK) {
      return Unavailable(std::string("cannot reach the test server at BERTH_TEST_PG_URL (") + url +
                         "): " + PQerrorMessage(admin_) +
                         "Is it running? `eval \"$(scripts/test-postgres.sh start)\"` starts one.");
    }
    PQsetNoticeProcessor(
        admin_, [](void*, const char*) {}, nullptr);  // DROP ... CASCADE chatter
    schema_ = "berth_test_" + RandomHex();            // generated, so safe to name in DDL
    BERTH_RETURN_IF_ERROR(Admin("CREATE SCHEMA " + schema_, {}));
    BERTH_ASSIGN_OR_RETURN(conninfo_, ConnInfoForSchema(url, schema_));
    return Status::Ok();
  }
  Result<std::unique_ptr<Store>> Open() { return OpenPostgresStore(conninfo_); }
  const std::string& conninfo() const { return conninfo_; }
  Result<std::unique_ptr<SqlConnection>> Raw() {
    BERTH_ASSIGN_OR_RETURN(std::unique_ptr<PostgresConnection> connection,
                           PostgresConnection::Connect(conninfo_));
    return std::unique_ptr<SqlConnection>(std::move(connection));
  }
  // Ends every server session of this test's stores, as a server restart or
  // a failover would, and waits (up to 10 s) until they are gone.
  Status KillStoreConnections() {
    return Admin(
        "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity"
        " WHERE application_name = $1",
        {schema_});
  }

 private:
  Status Admin(const std::string& sql, const std::vector<std::string>& params) {
    std::vector<const char*> values;
    for (const std::string& param : params) values.push_back(param.c_str());
    PGresult* result = PQexecParams(admin_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                    values.data(), nullptr, nullptr, 0);
    const ExecStatusType status = PQresultStatus(result);
    Status out = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK
                     ? Status::Ok()
                     : Internal(sql + ": " + PQresultErrorMessage(result));
    PQclear(result);
    return out;
  }

  PGconn* admin_ = nullptr;
  std::string schema_;
  std::string conninfo_;
};

// --- helpers ---

inline JobRecord NewJob(const std::string& name, const std::string& queue = "",
                        JobState state = JobState::kPending) {
  JobRecord job;
  job.request.name = name;
  job.request.command = {"sleep", "1"};
  job.request.queue = queue;
  job.state = state;
  job.submit_time = core::Time::FromSeconds(1'700'000'000);
  return job;
}

inline std::vector<std::string> Names(const std::vector<JobRecord>& jobs) {
  std::vector<std::string> names;
  for (const JobRecord& job : jobs) names.push_back(job.request.name);
  return names;
}

inline std::vector<JobId> Ids(const std::vector<JobRecord>& jobs) {
  std::vector<JobId> ids;
  for (const JobRecord& job : jobs) ids.push_back(job.id);
  return ids;
}

template <typename Backend>
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status status = backend_.SetUp();
    ASSERT_TRUE(status.ok()) << status.ToString();
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }

  std::unique_ptr<Store> Open() {
    Result<std::unique_ptr<Store>> store = backend_.Open();
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return nullptr;
    return std::move(store).value();
  }

  std::vector<JobId> Submit(const std::string& user, const std::string& key,
                            std::vector<JobRecord> jobs, Store* store = nullptr) {
    Result<std::vector<JobId>> ids =
        (store != nullptr ? *store : *store_).SubmitJobs(user, key, std::move(jobs));
    EXPECT_TRUE(ids.ok()) << ids.status().ToString();
    return ids.ok() ? *ids : std::vector<JobId>{};
  }
  JobId SubmitOne(const JobRecord& job, const std::string& user = "alice") {
    std::vector<JobId> ids = Submit(user, "", {job});
    return ids.empty() ? JobId(0) : ids[0];
  }
  JobRecord Get(JobId id) {
    Result<JobRecord> job = store_->GetJob(id);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : JobRecord{};
  }
  std::vector<JobRecord> List(JobFilter filter) {
    Result<std::vector<JobRecord>> jobs = store_->ListJobs(filter);
    EXPECT_TRUE(jobs.ok()) << jobs.status().ToString();
    return jobs.ok() ? *jobs : std::vector<JobRecord>{};
  }
  // Every job, through paging.
  std::vector<JobRecord> ListAll(JobFilter filter = {}) {
    std::vector<JobRecord> all;
    filter.limit = 1000;
    while (true) {
      std::vector<JobRecord> page = List(filter);
      all.insert(all.end(), page.begin(), page.end());
      if (page.size() < 1000) return all;
      filter.after = page.back().id;
    }
  }

  Backend backend_;
  std::unique_ptr<Store> store_;  // after backend_: closed before its database goes
};

struct BackendNames {
  template <typename Backend>
  static std::string GetName(int) {
    return Backend::Name();
  }
};

}  // namespace berth::store::store_testing
