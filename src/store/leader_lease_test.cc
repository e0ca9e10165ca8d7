// The leader's lease on a real PostgreSQL (BERTH_TEST_PG_URL): who may
// take it and when, and the fence that keeps a leader which lost it from
// writing.
#include "store/leader_lease.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "store/store_test_fixture.h"

namespace berth::store {
namespace {

using namespace store_testing;  // NOLINT: the suite's fixture and helpers
using std::chrono::milliseconds;

class LeaderLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Status status = backend_.SetUp();
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  std::unique_ptr<LeaderLease> Lease(const std::string& name, milliseconds ttl) {
    Result<std::unique_ptr<LeaderLease>> lease =
        LeaderLease::Connect(backend_.conninfo(), {name, "http://" + name + ":8080", ttl});
    EXPECT_TRUE(lease.ok()) << lease.status().ToString();
    return lease.ok() ? std::move(*lease) : nullptr;
  }

  // Whether the lease was taken; `otherwise` when the call failed.
  static bool Taken(LeaderLease& lease, bool otherwise) {
    Result<bool> taken = lease.TryAcquire();
    EXPECT_TRUE(taken.ok()) << taken.status().ToString();
    return taken.ok() ? *taken : otherwise;
  }

  PostgresBackend backend_;
};

TEST_F(LeaderLeaseTest, OneServerLeadsUntilItsLeaseRunsOutThenAnotherTakesOver) {
  std::unique_ptr<LeaderLease> a = Lease("a", milliseconds(400));
  std::unique_ptr<LeaderLease> b = Lease("b", milliseconds(400));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->Current().status().code(), StatusCode::kNotFound);
  ASSERT_EQ(Taken(*a, false), true);
  EXPECT_EQ(a->epoch(), 1);
  Result<bool> taken = b->TryAcquire();
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_FALSE(*taken);
  Result<LeaderInfo> current = b->Current();
  ASSERT_TRUE(current.ok()) << current.status().ToString();
  EXPECT_EQ(current->url, "http://a:8080");
  EXPECT_EQ(current->holder, "a");
  EXPECT_TRUE(current->live);

  // Renewed, it stays a's past its first ttl.
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(milliseconds(150));
    ASSERT_TRUE(a->Renew().ok());
    EXPECT_FALSE(Taken(*b, true));
  }
  // a stops renewing (paused, killed): b takes over once it expired.
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_FALSE(b->Current()->live);
  ASSERT_TRUE(Taken(*b, false));
  EXPECT_EQ(b->epoch(), 2);
  EXPECT_EQ(b->Current()->url, "http://b:8080");
  // a, resumed, cannot renew what it lost.
  EXPECT_EQ(a->Renew().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(Taken(*a, true));
}

TEST_F(LeaderLeaseTest, AReleasedLeaseIsTakenAtOnce) {
  std::unique_ptr<LeaderLease> a = Lease("a", milliseconds(60'000));
  std::unique_ptr<LeaderLease> b = Lease("b", milliseconds(60'000));
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(Taken(*a, false));
  EXPECT_FALSE(Taken(*b, true));
  a->Release();
  EXPECT_TRUE(Taken(*b, false));
}

// The old leader, paused past its lease, resumes and tries to write: the
// fence refuses it, and its store refuses every later write too.
TEST_F(LeaderLeaseTest, ALeaderWhoseLeaseWasTakenWritesNothingMore) {
  std::unique_ptr<LeaderLease> a = Lease("a", milliseconds(200));
  std::unique_ptr<LeaderLease> b = Lease("b", milliseconds(60'000));
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(Taken(*a, false));
  Result<std::unique_ptr<Store>> a_store = OpenLeaderStore(backend_.conninfo(), *a);
  ASSERT_TRUE(a_store.ok()) << a_store.status().ToString();
  Result<std::vector<JobId>> first = (*a_store)->SubmitJobs("alice", "", {NewJob("first")});
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  std::this_thread::sleep_for(milliseconds(300));
  ASSERT_TRUE(Taken(*b, false));
  Result<std::vector<JobId>> late = (*a_store)->SubmitJobs("alice", "", {NewJob("late")});
  EXPECT_EQ(late.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(late.status().message().find("fenced"), std::string::npos) << late.status().message();
  Result<JobRecord> job = (*a_store)->GetJob(first->at(0));
  ASSERT_TRUE(job.ok());
  job->state = JobState::kRunning;
  EXPECT_FALSE((*a_store)->QueueJobChanges({*job}, {}).get().ok());
  EXPECT_EQ((*a_store)->write_failure().code(), StatusCode::kFailedPrecondition);

  // The new leader's store writes, and sees only what a wrote while it led.
  Result<std::unique_ptr<Store>> b_store = OpenLeaderStore(backend_.conninfo(), *b);
  ASSERT_TRUE(b_store.ok());
  EXPECT_TRUE((*b_store)->SubmitJobs("alice", "", {NewJob("b's")}).ok());
  Result<std::vector<JobRecord>> jobs = (*b_store)->ListJobs(JobFilter{});
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(Names(*jobs), (std::vector<std::string>{"first", "b's"}));
  EXPECT_EQ(jobs->at(0).state, JobState::kPending);
}

}  // namespace
}  // namespace berth::store
