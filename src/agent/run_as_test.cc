// Tasks run as their job's Unix user, and one user's task cannot reach
// another's: real accounts (made by the test: CI is root), real
// supervisors, real processes. What the probing task could not do is read
// from its own log, as a user would see it.
#include <gmock/gmock.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/account.h"
#include "agent/agent_http.h"
#include "agent/testing/runner_fixture.h"
#include "agent/testing/unix_users.h"

namespace berth::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::ReadPids;
using testing::RunnerOptions;
using testing::ShellTask;
using testing::Slurp;
using testing::TempDir;
using testing::TestAccount;
using testing::WaitFor;
using testing::WaitForExit;

class RunAsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to make accounts and switch to them";
    std::optional<Account> alice = TestAccount("berth-test-alice", /*in_group=*/true);
    std::optional<Account> bob = TestAccount("berth-test-bob", /*in_group=*/false);
    ASSERT_TRUE(alice && bob) << "useradd failed";
    alice_ = *alice;
    bob_ = *bob;
    // Tasks reach their work dirs through the state dir (0711), and so
    // through its parent, which mkdtemp made 0700.
    ASSERT_EQ(::chmod(dir_.path().c_str(), 0711), 0);
    TaskRunnerOptions options = RunnerOptions(dir_.path());
    options.allow_root_jobs = false;  // a node's default
    runner_ = TaskRunner::Open(options).value();
  }

  protocol::TaskAssignment TaskOf(const Account& account, int64_t job, const std::string& script) {
    protocol::TaskAssignment task = ShellTask(job, script);
    task.user = account.name;
    task.launch.run_as.user = account.name;
    return task;
  }
  std::string TaskDir(int64_t job) const {
    return runner_->tasks_dir() + "/" + TaskKey{core::JobId{job}, 0, 1}.DirName();
  }

  TempDir dir_;
  Account alice_;
  Account bob_;
  std::unique_ptr<TaskRunner> runner_;
};

// "Uid:\t1001\t1001\t1001\t1001" -> every id on the line is `id`.
void ExpectIds(const std::string& status, const std::string& field, uint32_t id) {
  const size_t at = status.find(field + ":");
  ASSERT_NE(at, std::string::npos) << field;
  std::istringstream line(status.substr(at + field.size() + 1, status.find('\n', at) - at));
  int seen = 0;
  for (uint32_t value; line >> value; ++seen) EXPECT_EQ(value, id) << field;
  EXPECT_EQ(seen, 4) << field << ": real, effective, saved and filesystem ids";
}

TEST_F(RunAsTest, ATaskRunsWithItsUsersIdsGroupsAndPasswdEntry) {
  ASSERT_TRUE(runner_
                  ->Start(TaskOf(alice_, 1,
                                 "cat /proc/self/status > status; touch made; "
                                 "echo \"$HOME $USER $LOGNAME $SHELL\" > env"))
                  .ok());
  std::optional<LocalTask> task = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(task && task->exit);
  ASSERT_EQ(task->exit->exit_code, 0) << Slurp(TaskDir(1) + "/log");
  const std::string work = TaskDir(1) + "/work";
  const std::string status = Slurp(work + "/status");
  ExpectIds(status, "Uid", alice_.uid);
  ExpectIds(status, "Gid", alice_.gid);
  const group* team = ::getgrnam(testing::kTestGroup);
  ASSERT_NE(team, nullptr);
  const size_t groups = status.find("Groups:");
  EXPECT_THAT(status.substr(groups, status.find('\n', groups) - groups),
              HasSubstr(std::to_string(team->gr_gid)));
  struct stat made {};
  ASSERT_EQ(::stat((work + "/made").c_str(), &made), 0);
  EXPECT_EQ(made.st_uid, alice_.uid) << "its files are its own";
  EXPECT_EQ(made.st_gid, alice_.gid);
  EXPECT_EQ(Slurp(work + "/env"),
            alice_.home + " " + alice_.name + " " + alice_.name + " " + alice_.shell + "\n");
}

TEST_F(RunAsTest, OneUsersTaskCannotReadNorSignalAnothers) {
  protocol::TaskAssignment secret = TaskOf(alice_, 1, "echo $$ > pid; exec sleep 1000");
  secret.launch.env["SECRET"] = "alice-secret";
  ASSERT_TRUE(runner_->Start(secret).ok());
  const std::string alice_dir = TaskDir(1);
  ASSERT_TRUE(WaitFor([&] { return ReadPids(alice_dir + "/work/pid").size() == 1; }));
  const pid_t alice_pid = ReadPids(alice_dir + "/work/pid")[0];
  // The node's agent token, where berth dev keeps it: in the state dir.
  const std::string token = dir_.path() + "/token";
  std::ofstream(token) << "agent-secret\n";
  ASSERT_EQ(::chmod(token.c_str(), 0600), 0);

  const std::string pid = std::to_string(alice_pid);
  const std::string probe = "for f in " + alice_dir + "/spec.json " + alice_dir + "/log " +
                            alice_dir + "/work/pid /proc/" + pid + "/environ " + token +
                            "; do cat $f >/dev/null 2>&1 && echo \"read $f\" || echo \"denied "
                            "$f\"; done; kill -STOP " +
                            pid + " 2>/dev/null && echo 'signalled' || echo 'kill denied'";
  ASSERT_TRUE(runner_->Start(TaskOf(bob_, 2, probe)).ok());
  std::optional<LocalTask> probed = WaitForExit(*runner_, core::JobId{2});
  ASSERT_TRUE(probed && probed->exit);
  const std::string said = Slurp(TaskDir(2) + "/log");
  EXPECT_THAT(said, Not(HasSubstr("read "))) << said;
  EXPECT_THAT(said, HasSubstr("denied " + alice_dir + "/spec.json"));
  EXPECT_THAT(said, HasSubstr("denied /proc/" + pid + "/environ"));
  EXPECT_THAT(said, HasSubstr("denied " + token));
  EXPECT_THAT(said, HasSubstr("kill denied"));
  std::optional<ProcStat> stat = ReadProcStat(alice_pid);
  ASSERT_TRUE(stat);
  EXPECT_NE(stat->state, 'T') << "alice's task was stopped by bob's";

  // And alice reads her own log.
  struct stat log {};
  ASSERT_EQ(::stat((alice_dir + "/log").c_str(), &log), 0);
  EXPECT_EQ(log.st_uid, alice_.uid);
  EXPECT_EQ(log.st_mode & 0777, 0600u);
  ASSERT_TRUE(runner_->Stop(TaskKey{core::JobId{1}, 0, 1}, core::Duration::Millis(100)).ok());
  ASSERT_TRUE(WaitForExit(*runner_, core::JobId{1}));
}

TEST_F(RunAsTest, OutputFilesAreOpenedAsTheUserWhereTheJobSays) {
  const std::string home = dir_.path() + "/home-alice";
  ASSERT_EQ(::mkdir(home.c_str(), 0755), 0);
  ASSERT_EQ(::chown(home.c_str(), alice_.uid, alice_.gid), 0);
  const auto run = [&](int64_t job, const std::string& output, const std::string& error,
                       bool append, const std::string& script) {
    protocol::TaskAssignment task = TaskOf(alice_, job, script);
    task.launch.name = "train";
    task.launch.workdir = home;
    task.launch.output = output;
    task.launch.error = error;
    task.launch.append_output = append;
    EXPECT_TRUE(runner_->Start(task).ok());
    return WaitForExit(*runner_, core::JobId{job});
  };
  std::optional<LocalTask> split =
      run(1, "%x-%j.out", "%x-%j.err", false, "echo out; echo err >&2");
  ASSERT_TRUE(split && split->exit);
  EXPECT_EQ(split->exit->exit_code, 0) << Slurp(TaskDir(1) + "/log");
  EXPECT_EQ(Slurp(home + "/train-1.out"), "out\n");
  EXPECT_EQ(Slurp(home + "/train-1.err"), "err\n");
  struct stat made {};
  ASSERT_EQ(::stat((home + "/train-1.out").c_str(), &made), 0);
  EXPECT_EQ(made.st_uid, alice_.uid);

  // One file for both streams; append keeps what was there, truncate not.
  ASSERT_TRUE(run(2, "shared.log", "", true, "echo one; echo two >&2"));
  ASSERT_TRUE(run(3, "shared.log", "", true, "echo three"));
  EXPECT_EQ(Slurp(home + "/shared.log"), "one\ntwo\nthree\n");
  ASSERT_TRUE(run(4, "shared.log", "", false, "echo four"));
  EXPECT_EQ(Slurp(home + "/shared.log"), "four\n");

  // berth logs shows the output file: the task user's own file only.
  const auto logs = [&](int64_t job) {
    return ServeLogs(runner_->tasks_dir(), "key", "Bearer key",
                     {{"job", std::to_string(job)}, {"task", "0"}});
  };
  EXPECT_EQ(logs(4).body, "four\n");
  ASSERT_EQ(::unlink((home + "/shared.log").c_str()), 0);
  ASSERT_EQ(::symlink((dir_.path() + "/root-only").c_str(), (home + "/shared.log").c_str()), 0);
  std::ofstream(dir_.path() + "/root-only") << "root's secret\n";
  const LogsReply swapped = logs(4);
  EXPECT_EQ(swapped.status, 403);
  EXPECT_THAT(swapped.body, Not(HasSubstr("secret")));

  // Where the user may not write, the task does not start, and says why.
  std::optional<LocalTask> denied = run(5, "/root/train.out", "", false, "echo never");
  ASSERT_TRUE(denied && denied->exit);
  EXPECT_EQ(denied->exit->reason, "start_failed");
  EXPECT_EQ(denied->exit->message,
            "cannot open the output file /root/train.out: Permission denied");
}

TEST_F(RunAsTest, RootJobsAreRefusedUnlessTheNodeAllowsThem) {
  protocol::TaskAssignment as_root = ShellTask(1, "exit 0");
  as_root.launch.run_as.user = "root";
  EXPECT_FALSE(runner_->Start(as_root).ok());
  std::optional<LocalTask> refused = WaitForExit(*runner_, core::JobId{1});
  ASSERT_TRUE(refused && refused->exit);
  EXPECT_EQ(refused->exit->reason, "start_failed");
  EXPECT_EQ(refused->exit->message,
            "jobs may not run as root on node node-1 (its agent allows them with "
            "--allow-root-jobs)");
}

TEST(RunAsPolicyTest, AUserWithoutAnAccountCannotRunAnywhere) {
  const RunAsPolicy policy{"gpu-07", 0, "root", false};
  Result<Account> none = ResolveRunAs("berth-no-such-user", policy);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "user 'berth-no-such-user' has no account on node gpu-07");
}

TEST(RunAsPolicyTest, AnAgentThatIsNotRootRunsOnlyItsOwnUsersTasks) {
  Result<Account> root = LookupUnixAccount("root");
  ASSERT_TRUE(root.ok());
  Result<Account> daemon = LookupUnixAccount("daemon");
  ASSERT_TRUE(daemon.ok()) << "Debian has a daemon account";
  const RunAsPolicy policy{"gpu-07", daemon->uid, "daemon", false};
  EXPECT_TRUE(ResolveRunAs("daemon", policy).ok());
  Result<Account> other = ResolveRunAs("root", RunAsPolicy{"gpu-07", daemon->uid, "daemon", true});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message(),
            "the agent on node gpu-07 runs as 'daemon', not root, and starts tasks only for "
            "'daemon', not for 'root'");
}

TEST(RunAsPolicyTest, AnAccountCarriesItsGroupsAndPasswdEntry) {
  Result<Account> root = LookupUnixAccount("root");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->uid, 0u);
  EXPECT_EQ(root->home, "/root");
  EXPECT_THAT(root->groups, ::testing::Contains(root->gid));
  EXPECT_EQ(LookupUnixAccount("berth-no-such-user").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace berth::agent
