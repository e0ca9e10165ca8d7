// The Store suite: one typed suite that every implementation passes, on real
// databases. SQLite runs on a file in a fresh temp dir; PostgreSQL on the
// server named by BERTH_TEST_PG_URL, in a fresh schema per test. Without
// that variable the PostgreSQL tests fail (CI must run them): start a server
// with `eval "$(scripts/test-postgres.sh start)"`.
#include "store/store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "store/store_test_fixture.h"

namespace berth::store {
namespace {

using namespace store_testing;  // NOLINT: the suite's fixture and helpers
using testing_records::Queue;
using testing_records::SomeQueues;

using Backends = ::testing::Types<SqliteBackend, PostgresBackend>;
TYPED_TEST_SUITE(StoreTest, Backends, BackendNames);

// --- submitting ---

TYPED_TEST(StoreTest, SubmitAssignsAscendingIdsAndVersionOne) {
  const JobId a = this->SubmitOne(NewJob("a"));
  const JobId b = this->SubmitOne(NewJob("b"));
  std::vector<JobId> array = this->Submit("alice", "", {NewJob("c0"), NewJob("c1"), NewJob("c2")});
  ASSERT_EQ(array.size(), 3u);
  EXPECT_LT(a, b);
  EXPECT_LT(b, array[0]);
  EXPECT_LT(array[0], array[1]);
  EXPECT_LT(array[1], array[2]);
  const JobRecord stored = this->Get(b);
  EXPECT_EQ(stored.id, b);
  EXPECT_EQ(stored.version, 1);
  EXPECT_EQ(stored.user, "alice");
  EXPECT_EQ(stored.request.name, "b");
}

TYPED_TEST(StoreTest, EveryFieldOfAJobRoundTrips) {
  JobRecord job = testing_records::FullJob();
  job.array_parent.reset();  // a lone job; arrays are below
  const JobId id = this->SubmitOne(job, "bob");
  JobRecord expected = job;
  expected.id = id;
  expected.user = "bob";  // the submitting user, whatever the record said
  expected.version = 1;
  EXPECT_EQ(this->Get(id), expected);
}

TYPED_TEST(StoreTest, AnArraySubmissionPointsAtItsFirstJob) {
  std::vector<JobRecord> jobs;
  for (int i = 0; i < 3; ++i) {
    jobs.push_back(NewJob("sweep"));
    jobs.back().request.array_index = i;
  }
  const std::vector<JobId> ids = this->Submit("alice", "", jobs);
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(this->Get(ids[0]).array_parent, std::nullopt);
  EXPECT_EQ(this->Get(ids[1]).array_parent, ids[0]);
  EXPECT_EQ(this->Get(ids[2]).array_parent, ids[0]);
  EXPECT_EQ(this->Get(ids[2]).request.array_index, 2);
}

TYPED_TEST(StoreTest, AnEmptySubmissionIsInvalid) {
  Result<std::vector<JobId>> ids = this->store_->SubmitJobs("alice", "", {});
  ASSERT_FALSE(ids.ok());
  EXPECT_EQ(ids.status().code(), StatusCode::kInvalidArgument);
}

TYPED_TEST(StoreTest, TheLastJobIdIsTheHighestAssigned) {
  Result<JobId> none = this->store_->LastJobId();
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(*none, JobId(0));
  this->Submit("alice", "", {NewJob("a"), NewJob("b")});
  const JobId c = this->Submit("alice", "key", {NewJob("c")})[0];
  this->Submit("alice", "key", {NewJob("c")});  // a replay assigns nothing
  Result<JobId> last = this->store_->LastJobId();
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(*last, c);
  const JobId d = this->Submit("bob", "", {NewJob("d")})[0];
  EXPECT_EQ(this->store_->LastJobId().value(), d);
}

TYPED_TEST(StoreTest, AMissingJobIsNotFound) {
  Result<JobRecord> job = this->store_->GetJob(JobId(424242));
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(job.status().message(), "job 424242: not found");
}

// --- idempotency ---

TYPED_TEST(StoreTest, ARepeatedKeyReturnsTheFirstIdsAndInsertsNothing) {
  const std::vector<JobId> first = this->Submit("alice", "key-1", {NewJob("a"), NewJob("b")});
  const std::vector<JobId> again = this->Submit("alice", "key-1", {NewJob("other")});
  EXPECT_EQ(again, first);
  EXPECT_EQ(Names(this->ListAll()), (std::vector<std::string>{"a", "b"}));
  // The key is per user, and an empty key is no key.
  const std::vector<JobId> bobs = this->Submit("bob", "key-1", {NewJob("c")});
  EXPECT_NE(bobs, first);
  const JobId d1 = this->SubmitOne(NewJob("d"));
  const JobId d2 = this->SubmitOne(NewJob("d"));
  EXPECT_NE(d1, d2);
  EXPECT_EQ(this->ListAll().size(), 5u);
}

TYPED_TEST(StoreTest, RacingSubmitsWithOneKeyInsertOnce) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 10;
  for (int round = 0; round < kRounds; ++round) {
    const std::string key = "race-" + std::to_string(round);
    std::vector<std::vector<JobId>> results(kThreads);
    std::latch start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        results[static_cast<size_t>(t)] = this->Submit("carol", key, {NewJob(key)});
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (const std::vector<JobId>& ids : results) {
      ASSERT_EQ(ids.size(), 1u);
      EXPECT_EQ(ids, results[0]) << key;
    }
  }
  JobFilter carols;
  carols.user = "carol";
  EXPECT_EQ(this->ListAll(carols).size(), static_cast<size_t>(kRounds));
}

TYPED_TEST(StoreTest, RacingSubmitsWithOneKeyThroughTwoStoresInsertOnce) {
  // Two servers on one database (PostgreSQL replicas, or two processes on
  // one SQLite file): the database, not a lock in memory, keeps keys unique.
  std::unique_ptr<Store> other = this->Open();
  ASSERT_NE(other, nullptr);
  constexpr int kThreads = 8;
  for (int round = 0; round < 5; ++round) {
    const std::string key = "two-stores-" + std::to_string(round);
    std::vector<std::vector<JobId>> results(kThreads);
    std::latch start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        Store* store = t % 2 == 0 ? this->store_.get() : other.get();
        results[static_cast<size_t>(t)] = this->Submit("dave", key, {NewJob(key)}, store);
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (const std::vector<JobId>& ids : results) EXPECT_EQ(ids, results[0]) << key;
  }
  JobFilter daves;
  daves.user = "dave";
  EXPECT_EQ(this->ListAll(daves).size(), 5u);
}

// --- group commit (issue 4: concurrent submits share flushes) ---

TYPED_TEST(StoreTest, ConcurrentSubmitsShareCommits) {
  constexpr int kThreads = 16;
  constexpr int kSubmitsEach = 50;
  constexpr int kSubmits = kThreads * kSubmitsEach;
  const int64_t commits_before = this->store_->commits();
  std::vector<std::vector<JobId>> ids(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kSubmitsEach; ++i) {
        const std::string name = "t" + std::to_string(t) + "-" + std::to_string(i);
        std::vector<JobId> got = this->Submit("erin", "", {NewJob(name)});
        ASSERT_EQ(got.size(), 1u);
        ids[static_cast<size_t>(t)].push_back(got[0]);
        // Acknowledged means committed: any connection reads it at once.
        Result<JobRecord> job = this->store_->GetJob(got[0]);
        ASSERT_TRUE(job.ok()) << job.status().ToString();
        EXPECT_EQ(job->request.name, name);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const int64_t commits = this->store_->commits() - commits_before;

  std::set<JobId> distinct;
  for (const std::vector<JobId>& mine : ids) {
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
    distinct.insert(mine.begin(), mine.end());
  }
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kSubmits));
  const std::vector<JobId> stored = Ids(this->ListAll());
  EXPECT_EQ(std::set<JobId>(stored.begin(), stored.end()), distinct);
  EXPECT_LT(commits, kSubmits);
  std::cout << "[ group commit ] " << TypeParam::Name() << ": " << kSubmits << " submits from "
            << kThreads << " threads in " << commits << " commits\n";
  this->RecordProperty("submits", kSubmits);
  this->RecordProperty("commits", static_cast<int>(commits));
}

// --- updates ---

TYPED_TEST(StoreTest, AnUpdateWritesTheJobAndBumpsItsVersion) {
  const JobId id = this->SubmitOne(NewJob("train", "vision"));
  JobRecord job = this->Get(id);
  job.state = JobState::kRunning;
  job.request.queue = "nlp";
  job.reason = core::JobReason::kExited;
  job.start_time = core::Time::FromSeconds(1'700'000'050);
  job.placement = {{"gpu-03", {4, 5}}};
  job.attempts = 1;
  ASSERT_TRUE(this->store_->UpdateJobs({job}).ok());
  JobRecord expected = job;
  expected.version = 2;
  EXPECT_EQ(this->Get(id), expected);
  // The queried columns moved with it.
  JobFilter running;
  running.state = JobState::kRunning;
  running.queue = "nlp";
  EXPECT_EQ(Ids(this->List(running)), std::vector<JobId>{id});
}

TYPED_TEST(StoreTest, AStaleVersionIsRefusedAndNothingIsWritten) {
  const JobId a = this->SubmitOne(NewJob("a"));
  const JobId b = this->SubmitOne(NewJob("b"));
  JobRecord stale_a = this->Get(a);
  JobRecord fresh_a = stale_a;
  fresh_a.message = "first writer";
  ASSERT_TRUE(this->store_->UpdateJobs({fresh_a}).ok());

  JobRecord new_b = this->Get(b);
  new_b.message = "would be written";
  stale_a.message = "second writer";
  Status status = this->store_->UpdateJobs({new_b, stale_a});
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(), "job " + core::ToString(a) +
                                  ": version 1 is stale, the stored job is at 2 (someone "
                                  "changed it; read it again)");
  EXPECT_EQ(this->Get(a).message, "first writer");
  EXPECT_EQ(this->Get(b).message, "");
  EXPECT_EQ(this->Get(b).version, 1);
}

TYPED_TEST(StoreTest, UpdatingAMissingJobIsNotFoundAndWritesNothing) {
  const JobId a = this->SubmitOne(NewJob("a"));
  JobRecord job = this->Get(a);
  job.message = "changed";
  JobRecord missing = job;
  missing.id = JobId(777777);
  Status status = this->store_->UpdateJobs({job, missing});
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "job 777777: not found");
  EXPECT_EQ(this->Get(a).version, 1);
  EXPECT_TRUE(this->store_->UpdateJobs({}).ok());
}

TYPED_TEST(StoreTest, QueuedChangesWriteJobsAndUsageTogether) {
  const JobId id = this->SubmitOne(NewJob("train", "vision"));
  JobRecord job = this->Get(id);
  job.state = JobState::kSucceeded;
  job.end_time = core::Time::FromSeconds(1'700'000'100);
  job.peak_memory = core::MemoryMiB(61);
  job.cpu_time = core::Duration::Micros(150'000'001);
  // Measured in the tasks' cgroups (issue 27).
  const UsageRecord usage{id,
                          "alice",
                          "vision",
                          core::WholeGpus(2),
                          core::Time::FromSeconds(1'700'000'000),
                          core::Time::FromSeconds(1'700'000'100),
                          core::MemoryMiB(61),
                          core::Duration::Micros(150'000'001)};
  std::shared_future<Status> durable = this->store_->QueueJobChanges({job}, {usage});
  // A barrier queued after it settles after it.
  EXPECT_TRUE(this->store_->Barrier().get().ok());
  ASSERT_EQ(durable.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_TRUE(durable.get().ok()) << durable.get().ToString();
  EXPECT_EQ(this->Get(id).state, JobState::kSucceeded);
  EXPECT_EQ(this->Get(id).version, 2);
  EXPECT_EQ(this->Get(id).peak_memory, core::MemoryMiB(61));
  EXPECT_EQ(this->Get(id).cpu_time, core::Duration::Micros(150'000'001));
  Result<std::vector<UsageRecord>> runs =
      this->store_->ListUsage(core::Time::FromSeconds(0), core::Time::FromSeconds(2'000'000'000));
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(*runs, std::vector<UsageRecord>{usage});
  EXPECT_TRUE(this->store_->write_failure().ok());
}

TYPED_TEST(StoreTest, AFailedQueuedChangeWritesNothingAndRefusesEveryLaterWrite) {
  const JobId a = this->SubmitOne(NewJob("a"));
  JobRecord stale = this->Get(a);
  stale.version = 7;  // what a server whose memory ran ahead would hold
  const UsageRecord usage{a,
                          "alice",
                          "vision",
                          core::WholeGpus(1),
                          core::Time::FromSeconds(0),
                          core::Time::FromSeconds(10)};
  Status status = this->store_->QueueJobChanges({stale}, {usage}).get();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  Result<std::vector<UsageRecord>> runs =
      this->store_->ListUsage(core::Time::FromSeconds(0), core::Time::FromSeconds(100));
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty()) << "the usage went with the job's record";

  const Status failure = this->store_->write_failure();
  EXPECT_EQ(failure.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(failure.message().find("restart the server"), std::string::npos) << failure.message();
  EXPECT_EQ(this->store_->Barrier().get().message(), failure.message());
  EXPECT_EQ(this->store_->QueueJobChanges({}, {usage}).get().message(), failure.message());
  JobRecord fresh = this->Get(a);
  fresh.message = "after the failure";
  EXPECT_EQ(this->store_->UpdateJobs({fresh}).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(this->Get(a).message, "") << "reads still work; writes do not";
}

TYPED_TEST(StoreTest, OfRacingUpdatesOfOneVersionExactlyOneWins) {
  const JobId id = this->SubmitOne(NewJob("contended"));
  const JobRecord read = this->Get(id);
  constexpr int kThreads = 8;
  std::atomic<int> won{0};
  std::atomic<int> stale{0};
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      JobRecord mine = read;
      mine.message = "writer " + std::to_string(t);
      start.arrive_and_wait();
      Status status = this->store_->UpdateJobs({mine});
      if (status.ok()) ++won;
      if (status.code() == StatusCode::kFailedPrecondition) ++stale;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(stale.load(), kThreads - 1);
  EXPECT_EQ(this->Get(id).version, 2);
}

// --- listing ---

TYPED_TEST(StoreTest, ListJobsFilters) {
  const JobId a1 = this->SubmitOne(NewJob("a1", "q1", JobState::kPending), "alice");
  const JobId a2 = this->SubmitOne(NewJob("a2", "q2", JobState::kRunning), "alice");
  this->SubmitOne(NewJob("b1", "q1", JobState::kSucceeded), "bob");
  this->SubmitOne(NewJob("b2", "", JobState::kFailed), "bob");
  this->SubmitOne(NewJob("c1", "q1", JobState::kCancelled), "carol");
  this->SubmitOne(NewJob("c2", "q2", JobState::kHeld), "carol");
  using NameList = std::vector<std::string>;

  EXPECT_EQ(Names(this->List({})), (NameList{"a1", "a2", "b1", "b2", "c1", "c2"}));
  JobFilter filter;
  filter.state = JobState::kRunning;
  EXPECT_EQ(Names(this->List(filter)), NameList{"a2"});
  filter = {};
  filter.user = "bob";
  EXPECT_EQ(Names(this->List(filter)), (NameList{"b1", "b2"}));
  filter = {};
  filter.queue = "q1";
  EXPECT_EQ(Names(this->List(filter)), (NameList{"a1", "b1", "c1"}));
  filter.queue = "";  // the default queue
  EXPECT_EQ(Names(this->List(filter)), NameList{"b2"});
  filter = {};
  filter.live_only = true;
  EXPECT_EQ(Names(this->List(filter)), (NameList{"a1", "a2", "c2"}));
  filter.user = "alice";
  filter.queue = "q2";
  EXPECT_EQ(Names(this->List(filter)), NameList{"a2"});
  filter = {};
  filter.after = a2;
  EXPECT_EQ(Names(this->List(filter)), (NameList{"b1", "b2", "c1", "c2"}));
  filter.after = a1;
  filter.user = "carol";
  filter.state = JobState::kHeld;
  EXPECT_EQ(Names(this->List(filter)), NameList{"c2"});
  filter.user = "nobody";
  EXPECT_TRUE(this->List(filter).empty());
}

TYPED_TEST(StoreTest, ListJobsPagesInIdOrder) {
  std::vector<JobId> all;
  for (int i = 0; i < 25; ++i) all.push_back(this->SubmitOne(NewJob("j" + std::to_string(i))));
  JobFilter filter;
  filter.limit = 10;
  std::vector<JobId> seen;
  std::vector<size_t> sizes;
  while (true) {
    const std::vector<JobRecord> page = this->List(filter);
    sizes.push_back(page.size());
    if (page.empty()) break;
    for (const JobRecord& job : page) seen.push_back(job.id);
    filter.after = page.back().id;
  }
  EXPECT_EQ(seen, all);
  EXPECT_EQ(sizes, (std::vector<size_t>{10, 10, 5, 0}));
}

TYPED_TEST(StoreTest, ListJobsCapsTheLimitAndRefusesNonPositiveOnes) {
  std::vector<JobRecord> many(1005, NewJob("many"));
  ASSERT_EQ(this->Submit("alice", "", many).size(), 1005u);
  JobFilter filter;
  filter.limit = 5000;
  EXPECT_EQ(this->List(filter).size(), 1000u);
  for (int32_t limit : {0, -1}) {
    filter.limit = limit;
    Result<std::vector<JobRecord>> jobs = this->store_->ListJobs(filter);
    ASSERT_FALSE(jobs.ok());
    EXPECT_EQ(jobs.status().code(), StatusCode::kInvalidArgument);
  }
}

// --- tokens, nodes, queues, usage ---

TYPED_TEST(StoreTest, TokensAreFoundByHashAndReplacedById) {
  const TokenRecord admin = testing_records::Token("t-admin", "hash-a", Role::kAdmin);
  const TokenRecord agent = testing_records::Token("t-agent", "hash-b", Role::kAgent);
  ASSERT_TRUE(this->store_->PutToken(agent).ok());
  ASSERT_TRUE(this->store_->PutToken(admin).ok());
  Result<TokenRecord> found = this->store_->FindTokenByHash("hash-b");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, agent);

  TokenRecord revoked = admin;
  revoked.revoked = true;
  ASSERT_TRUE(this->store_->PutToken(revoked).ok());
  Result<std::vector<TokenRecord>> tokens = this->store_->ListTokens();
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_EQ(*tokens, (std::vector<TokenRecord>{revoked, agent}));  // by id

  EXPECT_EQ(this->store_->FindTokenByHash("hash-z").status().code(), StatusCode::kNotFound);
  const Status clash = this->store_->PutToken(testing_records::Token("t-x", "hash-a", Role::kUser));
  EXPECT_EQ(clash.code(), StatusCode::kAlreadyExists) << clash.ToString();
}

// Issue 27: a token may carry an expiry; none means it never expires.
TYPED_TEST(StoreTest, ATokensExpiryIsKeptAndCanBeCleared) {
  TokenRecord token = testing_records::Token("t-exp", "hash-e", Role::kUser);
  token.expires = core::Time::FromMicros(1'800'000'000'123'456);
  ASSERT_TRUE(this->store_->PutToken(token).ok());
  EXPECT_EQ(*this->store_->FindTokenByHash("hash-e"), token);

  token.expires.reset();
  ASSERT_TRUE(this->store_->PutToken(token).ok());
  Result<TokenRecord> found = this->store_->FindTokenByHash("hash-e");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->expires, std::nullopt);
}

TYPED_TEST(StoreTest, NodesAreReplacedByName) {
  NodeRecord b = testing_records::Node("node-b", core::NodeState::kUp);
  const NodeRecord a = testing_records::Node("node-a", core::NodeState::kDown);
  ASSERT_TRUE(this->store_->PutNode(b).ok());
  ASSERT_TRUE(this->store_->PutNode(a).ok());
  b.drained = true;
  b.state = core::NodeState::kDraining;
  b.address = "10.0.0.2:7701";
  ASSERT_TRUE(this->store_->PutNode(b).ok());
  Result<std::vector<NodeRecord>> nodes = this->store_->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ(NodeRecordToJson((*nodes)[0]), NodeRecordToJson(a));
  EXPECT_EQ(NodeRecordToJson((*nodes)[1]), NodeRecordToJson(b));
}

std::string QueueText(const std::vector<core::QueueSpec>& queues) {
  std::string out;
  for (const core::QueueSpec& q : queues) {
    out += q.name + "<" + q.parent + ">" + std::to_string(q.guaranteed.value()) + "/" +
           (q.ceiling ? std::to_string(q.ceiling->value()) : "none") + " " +
           QueueGovernanceToJson(q).dump() + " ";
  }
  return out;
}

TYPED_TEST(StoreTest, QueuesAreReplacedAsAWholeInTheirOrder) {
  ASSERT_TRUE(this->store_->PutQueues(SomeQueues()).ok());
  Result<std::vector<core::QueueSpec>> queues = this->store_->ListQueues();
  ASSERT_TRUE(queues.ok()) << queues.status().ToString();
  EXPECT_EQ(QueueText(*queues), QueueText(SomeQueues()));
  EXPECT_EQ(*queues, SomeQueues());

  const std::vector<core::QueueSpec> fewer = {Queue("ml", "", 8)};
  ASSERT_TRUE(this->store_->PutQueues(fewer).ok());
  EXPECT_EQ(QueueText(*this->store_->ListQueues()), QueueText(fewer));

  // A broken set (two queues of one name) changes nothing.
  const Status clash = this->store_->PutQueues({Queue("x", "", 0), Queue("x", "", 0)});
  EXPECT_EQ(clash.code(), StatusCode::kAlreadyExists) << clash.ToString();
  EXPECT_EQ(QueueText(*this->store_->ListQueues()), QueueText(fewer));
}

TYPED_TEST(StoreTest, UsageListsTheRunsThatOverlapAPeriod) {
  auto run = [](int64_t job, int64_t start_s, int64_t end_s) {
    return UsageRecord{JobId(job),
                       "alice",
                       "vision",
                       core::WholeGpus(2),
                       core::Time::FromSeconds(start_s),
                       core::Time::FromSeconds(end_s)};
  };
  const std::vector<UsageRecord> runs = {run(1, 0, 10), run(2, 10, 20), run(3, 20, 30),
                                         run(4, 5, 25), run(5, 100, 200)};
  ASSERT_TRUE(this->store_->QueueJobChanges({}, runs).get().ok());
  auto list = [&](int64_t from_s, int64_t to_s) {
    Result<std::vector<UsageRecord>> got =
        this->store_->ListUsage(core::Time::FromSeconds(from_s), core::Time::FromSeconds(to_s));
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? *got : std::vector<UsageRecord>{};
  };
  // [10, 20): a run ending at 10 or starting at 20 does not overlap it.
  EXPECT_EQ(list(10, 20), (std::vector<UsageRecord>{runs[3], runs[1]}));
  EXPECT_EQ(list(0, 1000), (std::vector<UsageRecord>{runs[0], runs[3], runs[1], runs[2], runs[4]}));
  EXPECT_TRUE(list(30, 100).empty());
  EXPECT_EQ(list(199, 500), std::vector<UsageRecord>{runs[4]});
}

// --- durability and visibility ---

TYPED_TEST(StoreTest, EverythingIsThereAfterReopening) {
  const std::vector<JobId> ids = this->Submit("alice", "keep", {NewJob("a"), NewJob("b")});
  ASSERT_EQ(ids.size(), 2u);
  JobRecord updated = this->Get(ids[1]);
  updated.state = JobState::kRunning;
  updated.placement = {{"node-a", {0}}};
  ASSERT_TRUE(this->store_->UpdateJobs({updated}).ok());
  TokenRecord token = testing_records::Token("t1", "h1", Role::kUser);
  token.expires = core::Time::FromSeconds(1'800'000'000);
  ASSERT_TRUE(this->store_->PutToken(token).ok());
  const NodeRecord node = testing_records::Node("node-a", core::NodeState::kUp);
  ASSERT_TRUE(this->store_->PutNode(node).ok());
  ASSERT_TRUE(this->store_->PutQueues(SomeQueues()).ok());
  const UsageRecord usage{
      ids[0], "alice", "", core::kOneGpu, core::Time::FromSeconds(1), core::Time::FromSeconds(2)};
  ASSERT_TRUE(this->store_->QueueJobChanges({}, {usage}).get().ok());
  const JobRecord first = this->Get(ids[0]);

  this->store_.reset();  // closes every connection
  this->store_ = this->Open();
  ASSERT_NE(this->store_, nullptr);

  EXPECT_EQ(this->Get(ids[0]), first);
  updated.version = 2;
  EXPECT_EQ(this->Get(ids[1]), updated);
  EXPECT_EQ(*this->store_->FindTokenByHash("h1"), token);
  Result<std::vector<NodeRecord>> nodes = this->store_->ListNodes();
  ASSERT_TRUE(nodes.ok() && nodes->size() == 1) << nodes.status().ToString();
  EXPECT_EQ(NodeRecordToJson(nodes->front()), NodeRecordToJson(node));
  EXPECT_EQ(QueueText(*this->store_->ListQueues()), QueueText(SomeQueues()));
  EXPECT_EQ(*this->store_->ListUsage(core::Time::Epoch(), core::Time::FromSeconds(10)),
            std::vector<UsageRecord>{usage});
  // The key still answers with its ids, and new ids stay above the old.
  EXPECT_EQ(this->Submit("alice", "keep", {NewJob("again")}), ids);
  EXPECT_GT(this->SubmitOne(NewJob("c")), ids[1]);
}

TYPED_TEST(StoreTest, AnotherStoreOnTheDatabaseSeesCommittedWrites) {
  std::unique_ptr<Store> other = this->Open();
  ASSERT_NE(other, nullptr);
  for (int i = 0; i < 20; ++i) {
    Store& writer = i % 2 == 0 ? *this->store_ : *other;
    Store& reader = i % 2 == 0 ? *other : *this->store_;
    const std::vector<JobId> ids = this->Submit("alice", "", {NewJob("v")}, &writer);
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_TRUE(reader.GetJob(ids[0]).ok()) << i;
  }
}

}  // namespace
}  // namespace berth::store
