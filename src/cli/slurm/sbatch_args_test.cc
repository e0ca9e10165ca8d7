#include "cli/slurm/sbatch_args.h"

#include <gtest/gtest.h>

namespace berth::cli::slurm {
namespace {

TEST(SbatchArgsTest, OptionsBeforeTheScriptMeanWhatSbatchLinesMean) {
  Result<SbatchRequest> request = ParseSbatchArgs(
      {"-N2", "--ntasks-per-node=4", "-J", "x", "--parsable", "-H", "--bogus", "1", "job.sh"});
  ASSERT_TRUE(request.ok()) << request.status().message();
  EXPECT_TRUE(request->parsable);
  EXPECT_EQ(request->script, "job.sh");
  ASSERT_TRUE(request->options.slurm.has_value());
  EXPECT_EQ(request->options.slurm->nodes, 2);
  EXPECT_EQ(request->options.slurm->ntasks_per_node, 4);
  EXPECT_EQ(request->options.name, "x");
  EXPECT_EQ(request->options.hold, true);
  EXPECT_EQ(request->warnings, std::vector<std::string>{"--bogus has no Berth meaning; ignored"});
  EXPECT_EQ(ParseSbatchArgs({"-N"}).status().message(), "-N: expects a value");
  EXPECT_FALSE(ParseSbatchArgs({"--wrap", "true", "job.sh"}).ok());
}

TEST(SbatchArgsTest, OnlySbatchsWaitTakesNoValue) {
  Result<SbatchRequest> sbatch = ParseSbatchArgs({"-W", "job.sh"});
  ASSERT_TRUE(sbatch.ok()) << sbatch.status().message();
  EXPECT_TRUE(sbatch->wait);
  EXPECT_EQ(sbatch->script, "job.sh");
  // srun -W 30 hostname: 30 s is -W's, hostname the command.
  Result<SbatchRequest> srun = ParseSbatchArgs({"-W", "30", "hostname"}, WaitOption::kSeconds);
  ASSERT_TRUE(srun.ok()) << srun.status().message();
  EXPECT_TRUE(srun->wait);
  EXPECT_EQ(srun->script, "hostname");
  EXPECT_TRUE(srun->script_args.empty());
  EXPECT_EQ(ParseSbatchArgs({"--wait"}, WaitOption::kSeconds).status().message(),
            "--wait: expects a value");
}

TEST(SbatchArgsTest, TheCommandLineWinsOverTheScriptsLines) {
  const std::string script =
      "#!/bin/bash\n#SBATCH -J fromscript\n#SBATCH --time=10:00\n#SBATCH --gres=gpu:2\ntrue\n";
  Result<SbatchRequest> request = ParseSbatchArgs({"-J", "cli", "dir/job.sh"});
  ASSERT_TRUE(request.ok());
  std::vector<std::string> warnings;
  Result<nlohmann::json> body = SbatchBody(*request, script, "/work/here", {}, warnings);
  ASSERT_TRUE(body.ok()) << body.status().message();
  EXPECT_EQ((*body)["name"], "cli");
  EXPECT_EQ((*body)["time_limit_s"], 600);
  EXPECT_EQ((*body)["gpus"], 2);
  EXPECT_EQ((*body)["workdir"], "/work/here");
  EXPECT_EQ((*body)["env"]["SLURM_SUBMIT_DIR"], "/work/here");
  EXPECT_EQ((*body)["script"], script);
  // Unnamed: the script's file name, or "wrap" as Slurm names them.
  body = SbatchBody(*ParseSbatchArgs({"dir/job.sh"}), "#!/bin/sh\ntrue\n", "/w", {}, warnings);
  EXPECT_EQ((*body)["name"], "job.sh");
  Result<SbatchRequest> wrapped = ParseSbatchArgs({"--wrap", "echo hi"});
  ASSERT_TRUE(wrapped.ok());
  body = SbatchBody(*wrapped, WrapScript(*wrapped->wrap), "/w", {}, warnings);
  EXPECT_EQ((*body)["name"], "wrap");
  EXPECT_EQ((*body)["script"], "#!/bin/sh\necho hi\n");
}

TEST(SbatchArgsTest, RefusesWhatSlurmOrBerthCannotRun) {
  std::vector<std::string> warnings;
  Result<nlohmann::json> body =
      SbatchBody(*ParseSbatchArgs({"job.sh"}), "echo no interpreter\n", "/w", {}, warnings);
  EXPECT_NE(body.status().message().find("The first line must start with #!"), std::string::npos);
  body = SbatchBody(*ParseSbatchArgs({"job.sh", "arg"}), "#!/bin/sh\n", "/w", {}, warnings);
  EXPECT_NE(body.status().message().find("without arguments"), std::string::npos);
}

// Help is asked for only among the options: the command's own -h is its own.
TEST(AsksForHelpTest, OnlyBeforeTheCommand) {
  EXPECT_TRUE(AsksForHelp({"--help"}));
  EXPECT_TRUE(AsksForHelp({"--nodes=2", "--usage"}));
  EXPECT_FALSE(AsksForHelp({"python3", "train.py", "--help"}));
  EXPECT_FALSE(AsksForHelp({}));
}

}  // namespace
}  // namespace berth::cli::slurm
