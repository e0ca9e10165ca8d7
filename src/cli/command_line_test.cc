// How berth reads its arguments: repeatable options before `--`, and bad
// flags or values exit 2 naming the flag and what it wanted.
#include "cli/command_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::cli {
namespace {

using ::testing::HasSubstr;

struct Submit {
  std::vector<std::string> env;
  std::vector<std::string> after;
  int gpus = 1;
  std::vector<std::string> command;
};

// A `berth submit` in miniature: two repeatable options, an integer, and
// the command after `--`.
void AddSubmit(CLI::App& app, Submit& flags) {
  CLI::App* submit = app.add_subcommand("submit");
  submit->add_option("--env", flags.env);
  submit->add_option("--after", flags.after);
  submit->add_option("--gpus", flags.gpus);
  submit->add_option("command", flags.command);
}

int Parse(CLI::App& app, std::vector<const char*> argv) {
  argv.insert(argv.begin(), "berth");
  return ParseCommandLine(app, static_cast<int>(argv.size()), argv.data());
}

TEST(CommandLineTest, RepeatableOptionsLeaveTheCommandAfterDashDash) {
  CLI::App app;
  Submit flags;
  AddSubmit(app, flags);
  OneValuePerOccurrence(app);
  ASSERT_EQ(Parse(app, {"submit", "--env", "A=1", "--after", "7", "--env", "B=2", "--", "sh", "-c",
                        "echo $A"}),
            0);
  EXPECT_EQ(flags.env, (std::vector<std::string>{"A=1", "B=2"}));
  EXPECT_EQ(flags.after, (std::vector<std::string>{"7"}));
  EXPECT_EQ(flags.command, (std::vector<std::string>{"sh", "-c", "echo $A"}));
}

TEST(CommandLineTest, AValueOfTheWrongTypeExitsTwoNamingTheFlag) {
  CLI::App app;
  Submit flags;
  AddSubmit(app, flags);
  testing::internal::CaptureStderr();
  const int code = Parse(app, {"submit", "--gpus", "two", "--", "true"});
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_THAT(said, HasSubstr("berth submit: --gpus: expected an integer, got 'two'"));
}

TEST(CommandLineTest, AnUnknownFlagExitsTwoNamingIt) {
  CLI::App app;
  Submit flags;
  AddSubmit(app, flags);
  testing::internal::CaptureStderr();
  const int code = Parse(app, {"submit", "--gpu", "2", "--", "true"});
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_THAT(said, HasSubstr("berth submit: --gpu: unknown flag (did you mean --gpus?)"));
}

TEST(CommandLineTest, HelpExitsZero) {
  CLI::App app;
  Submit flags;
  AddSubmit(app, flags);
  testing::internal::CaptureStdout();
  EXPECT_EQ(Parse(app, {"submit", "--help"}), 0);
  EXPECT_THAT(testing::internal::GetCapturedStdout(), HasSubstr("--env"));
}

}  // namespace
}  // namespace berth::cli
