#include "cli/slurm/exported_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/slurm/sbatch_args.h"

namespace berth::cli::slurm {
namespace {

using ::testing::HasSubstr;

TEST(ExportedEnvTest, AJobInheritsTheShellButNotWhatEachTaskGetsOfItsOwn) {
  std::vector<std::string> warnings;
  const Environment inheritable = InheritableEnvironment(
      {"PATH=/opt/conda/bin:/usr/bin", "LR=0.1", "EMPTY=", "SLURM_JOB_ID=7", "BERTH_TOKEN=secret",
       "CUDA_VISIBLE_DEVICES=0", "RANK=3", "LOCAL_RANK=1", "PWD=/home/u", "_=/usr/bin/sbatch",
       "HOME=/root", "USER=root", "LOGNAME=root", "SHELL=/bin/zsh",
       "BASH_FUNC_module%%=() {  eval x; }", "LONG=" + std::string(5000, 'x'), "noequals"},
      kMaxEnvValue, warnings);
  EXPECT_EQ(inheritable,
            (Environment{{"PATH", "/opt/conda/bin:/usr/bin"}, {"LR", "0.1"}, {"EMPTY", ""}}));
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_THAT(warnings[0], HasSubstr("'BASH_FUNC_module%%' is not exported"));
  EXPECT_THAT(warnings[1], HasSubstr("'LONG' is not exported: its 5000 bytes exceed Berth's 4096"));
}

TEST(ExportedEnvTest, ExportReadsAllNoneAndListsAsSlurmsSbatch) {
  const Environment shell{{"PATH", "/bin"}, {"LR", "0.1"}, {"HOME", "/home/u"}};
  EXPECT_EQ(*ExportedEnvironment("", shell), shell);
  EXPECT_EQ(*ExportedEnvironment("ALL", shell), shell);
  EXPECT_EQ(*ExportedEnvironment("NONE", shell), Environment{});
  EXPECT_EQ(*ExportedEnvironment("LR,UNSET", shell), (Environment{{"LR", "0.1"}}));
  EXPECT_EQ(*ExportedEnvironment("LR=0.5,EDITOR=vi", shell),
            (Environment{{"LR", "0.5"}, {"EDITOR", "vi"}}));
  // Word by word, a later one winning: ALL then a value overrides it.
  Environment all_and = shell;
  all_and["LR"] = "0.5";
  EXPECT_EQ(*ExportedEnvironment("ALL,LR=0.5", shell), all_and);
  EXPECT_EQ(*ExportedEnvironment("TAGS='a,b',X=\"c d\"", shell),
            (Environment{{"TAGS", "a,b"}, {"X", "c d"}}));
  // What each task gets of its own is never taken from the shell.
  EXPECT_EQ(*ExportedEnvironment("SLURM_JOB_ID=1,CUDA_VISIBLE_DEVICES=0", shell), Environment{});
  for (const char* bad : {"LR,,X", "1X=2", "A-B", ","}) {
    Result<Environment> refused = ExportedEnvironment(bad, shell);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("--export"));
  }
}

TEST(ExportedEnvTest, SbatchCarriesTheShellAsItsExportSays) {
  const Environment shell{{"PATH", "/opt/conda/bin"}, {"LR", "0.1"}};
  auto env_of = [&](const std::vector<std::string>& args, const std::string& script) {
    std::vector<std::string> warnings;
    Result<nlohmann::json> body = SbatchBody(*ParseSbatchArgs(args), script, "/w", shell, warnings);
    EXPECT_TRUE(body.ok()) << body.status().message();
    EXPECT_TRUE(warnings.empty()) << warnings.front();
    return body.ok() ? (*body)["env"] : nlohmann::json();
  };
  const std::string plain = "#!/bin/sh\ntrue\n";
  nlohmann::json env = env_of({"job.sh"}, plain);
  EXPECT_EQ(env["PATH"], "/opt/conda/bin");
  EXPECT_EQ(env["LR"], "0.1");
  EXPECT_EQ(env["SLURM_SUBMIT_DIR"], "/w");
  env = env_of({"job.sh"}, "#!/bin/sh\n#SBATCH --export=NONE\ntrue\n");
  EXPECT_FALSE(env.contains("PATH")) << env.dump();
  EXPECT_EQ(env["SLURM_SUBMIT_DIR"], "/w");
  // The command line over the script's line.
  env = env_of({"--export=LR=0.5", "job.sh"}, "#!/bin/sh\n#SBATCH --export=NONE\ntrue\n");
  EXPECT_EQ(env["LR"], "0.5");
  EXPECT_FALSE(env.contains("PATH")) << env.dump();
  std::vector<std::string> warnings;
  EXPECT_THAT(SbatchBody(*ParseSbatchArgs({"--export=1X", "job.sh"}), plain, "/w", shell, warnings)
                  .status()
                  .message(),
              HasSubstr("--export"));
}

}  // namespace
}  // namespace berth::cli::slurm
