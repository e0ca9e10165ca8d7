// berth submit's options: durations and memory as Slurm users write them,
// #BERTH and #SBATCH directives, precedence, and the JSON body.
#include "cli/submit_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(SubmitOptionsTest, DurationsInSlurmFormsAndWithUnits) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"10", 600},         {"10:30", 630},        {"01:02:03", 3723}, {"2-03", 183600},
      {"2-03:04", 183840}, {"1-00:00:05", 86405}, {"90s", 90},        {"30m", 1800},
      {"2h", 7200},        {"1d", 86400},         {"00:10:00", 600}};
  for (const auto& [text, seconds] : cases) {
    Result<int64_t> parsed = ParseDuration(text, "--time");
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, seconds) << text;
  }
  for (const std::string bad : {"", "abc", "1:2:3:4", "-5", "0", "00:00:00", "5x", "1-xx"}) {
    Result<int64_t> parsed = ParseDuration(bad, "--time");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("--time")) << bad;
  }
}

TEST(SubmitOptionsTest, MemoryUnits) {
  EXPECT_EQ(ParseMemoryMiB("512M", "--mem").value(), 512);
  EXPECT_EQ(ParseMemoryMiB("16G", "--mem").value(), 16384);
  EXPECT_EQ(ParseMemoryMiB("1T", "--mem").value(), 1 << 20);
  EXPECT_EQ(ParseMemoryMiB("2048", "--mem").value(), 2048);
  EXPECT_EQ(ParseMemoryMiB("1500K", "--mem").value(), 2);
  EXPECT_THAT(ParseMemoryMiB("lots", "--mem").status().message(), HasSubstr("--mem"));
}

TEST(SubmitOptionsTest, SingletonDependencyReachesTheServerAsAWord) {
  Result<ScriptDirectives> parsed =
      ParseScriptDirectives("#!/bin/sh\n#SBATCH --dependency=afterany:3,singleton\ntrue\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->sbatch.after, (std::vector<std::string>{"afterany:3", "singleton"}));
  Result<json> body = SubmissionBody(parsed->sbatch, {}, "script");
  ASSERT_TRUE(body.ok());
  EXPECT_EQ((*body)["depends_on"], json({"afterany:3", "singleton"}));
}

TEST(SubmitOptionsTest, SbatchLinesMeanWhatSlurmMeans) {
  Result<ScriptDirectives> parsed = ParseScriptDirectives(
      "#!/bin/bash\n"
      "#SBATCH --gres=gpu:4 --time=00:10:00 --job-name=x\n"
      "#SBATCH -N 2\n"
      "#SBATCH --ntasks-per-node=1\n"
      "#SBATCH --dependency=afterok:7:8\n"
      "#SBATCH --partition=vision --qos=high --no-requeue\n"
      "#SBATCH --output=slurm-%j.out -e %x.err --open-mode=append\n"
      "#SBATCH --mail-type=END\n"
      "\n"
      "# a comment\n"
      "python train.py\n"
      "#SBATCH --gres=gpu:8\n");  // after the first command: not a directive
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const SubmitOptions& o = parsed->sbatch;
  ASSERT_TRUE(o.slurm.has_value());
  EXPECT_EQ(o.slurm->gres_gpus, 4);  // --gres is per node
  EXPECT_EQ(o.gpus, std::nullopt);
  EXPECT_EQ(o.time, "00:10:00");
  EXPECT_EQ(o.name, "x");
  EXPECT_EQ(o.slurm->nodes, 2);
  EXPECT_EQ(o.slurm->ntasks_per_node, 1);
  EXPECT_EQ(o.after, (std::vector<std::string>{"afterok:7", "afterok:8"}));
  EXPECT_EQ(o.queue, "vision");
  EXPECT_EQ(o.priority, "high");
  EXPECT_EQ(o.requeue, false);
  EXPECT_EQ(o.output, "slurm-%j.out");
  EXPECT_EQ(o.error, "%x.err");
  EXPECT_EQ(o.open_mode, "append");
  ASSERT_EQ(parsed->warnings.size(), 1u);
  EXPECT_THAT(parsed->warnings[0], HasSubstr("--mail-type"));

  Result<json> body = SubmissionBody(o, {}, "script");
  ASSERT_TRUE(body.ok());
  EXPECT_EQ((*body)["output"], "slurm-%j.out");
  EXPECT_EQ((*body)["open_mode"], "append");
  // Issue 29: one Berth task per node, each with the node's 4 GPUs, on two
  // distinct nodes (not 2 tasks that may share a node).
  EXPECT_EQ((*body)["gpus"], 4);
  EXPECT_EQ((*body)["time_limit_s"], 600);
  EXPECT_EQ((*body)["name"], "x");
  EXPECT_EQ((*body)["tasks"], 2);
  EXPECT_EQ((*body)["distinct_nodes"], true);
  EXPECT_EQ((*body)["slurm_tasks_per_node"], json::array({1, 1}));
  EXPECT_EQ((*body)["script"], "script");
  EXPECT_FALSE(body->contains("command"));
}

// Issue 29: per-node and per-job GPU options were read as per task
// (--nodes=2 --ntasks-per-node=4 --gpus-per-node=4 became 8 tasks x 4
// GPUs; --gpus=4 --ntasks=2 took 8; -n 2 --gres=gpu:2 took 4).
TEST(SubmitOptionsTest, SlurmGpuOptionsKeepTheirPerJobPerNodeAndPerTaskMeanings) {
  struct Case {
    std::string lines;
    int64_t tasks, gpus, cpus;
    json layout;
  };
  const std::vector<Case> cases = {
      {"#SBATCH --nodes=2 --ntasks-per-node=4 --gpus-per-node=4\n", 2, 4, 0, {4, 4}},
      {"#SBATCH --gpus=4 --ntasks=2\n", 1, 4, 0, {2}},
      {"#SBATCH -n 2 --gres=gpu:2\n", 1, 2, 0, {2}},
      {"#SBATCH -n 4 --gpus-per-task=1 -c 2\n", 1, 4, 8, {4}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.lines);
    Result<ScriptDirectives> parsed = ParseScriptDirectives("#!/bin/sh\n" + c.lines);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    Result<json> body = SubmissionBody(parsed->sbatch, {}, "script");
    ASSERT_TRUE(body.ok()) << body.status().ToString();
    EXPECT_EQ((*body)["tasks"], c.tasks);
    EXPECT_EQ((*body)["gpus"], c.gpus);
    EXPECT_EQ(body->value("cpus", 0), c.cpus);  // reserved only when asked
    EXPECT_EQ((*body)["slurm_tasks_per_node"], c.layout);
    EXPECT_EQ(body->value("distinct_nodes", false), c.tasks > 1);
  }
}

TEST(SubmitOptionsTest, ASlurmArrayCarriesItsBoundsInEveryElementsEnv) {
  Result<ScriptDirectives> parsed = ParseScriptDirectives("#!/bin/sh\n#SBATCH --array=0-15:4%2\n");
  ASSERT_TRUE(parsed.ok());
  Result<json> body = SubmissionBody(parsed->sbatch, {}, "script");
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ((*body)["env"]["SLURM_ARRAY_TASK_MIN"], "0");
  EXPECT_EQ((*body)["env"]["SLURM_ARRAY_TASK_MAX"], "12");
  EXPECT_EQ((*body)["env"]["SLURM_ARRAY_TASK_COUNT"], "4");
  EXPECT_EQ((*body)["env"]["SLURM_ARRAY_TASK_STEP"], "4");
}

TEST(SubmitOptionsTest, BerthResourceFlagsWinOverSlurmLinesAsAWhole) {
  SubmitOptions command_line;
  command_line.gpus = 1;
  Result<ScriptDirectives> parsed =
      ParseScriptDirectives("#!/bin/sh\n#SBATCH --nodes=2 --gpus-per-node=4\n");
  ASSERT_TRUE(parsed.ok());
  command_line.FillFrom(parsed->sbatch);
  Result<json> body = SubmissionBody(command_line, {}, "script");
  ASSERT_TRUE(body.ok());
  EXPECT_EQ((*body)["gpus"], 1);
  EXPECT_FALSE(body->contains("tasks"));
  EXPECT_FALSE(body->contains("slurm_tasks_per_node"));
}

TEST(SubmitOptionsTest, BerthNodesAloneAsksDistinctNodes) {
  SubmitOptions o;
  o.nodes = 3;
  Result<json> body = SubmissionBody(o, {"hostname"}, "");
  ASSERT_TRUE(body.ok());
  EXPECT_EQ((*body)["tasks"], 3);
  EXPECT_EQ((*body)["distinct_nodes"], true);
  EXPECT_FALSE(body->contains("slurm_tasks_per_node"));  // one process per task still
}

TEST(SubmitOptionsTest, TypedGresAndShortFlags) {
  Result<ScriptDirectives> parsed =
      ParseScriptDirectives("#SBATCH --gres=gpu:a100:2 -n4 -t 2:00:00 -J train\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->sbatch.slurm->gres_gpus, 2);
  EXPECT_EQ(parsed->sbatch.gpu_type, "a100");
  EXPECT_EQ(parsed->sbatch.slurm->ntasks, 4);
  EXPECT_EQ(parsed->sbatch.time, "2:00:00");
  EXPECT_EQ(parsed->sbatch.name, "train");
}

TEST(SubmitOptionsTest, BerthLinesTakeBerthFlagsAndRejectUnknownOnes) {
  Result<ScriptDirectives> parsed = ParseScriptDirectives(
      "#!/bin/sh\n#BERTH --gpus 2 --preemptible --env A=1 --env 'B=two words'\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->berth.gpus, 2);
  EXPECT_EQ(parsed->berth.preemptible, true);
  EXPECT_EQ(parsed->berth.env, (std::vector<std::string>{"A=1", "B=two words"}));

  Result<ScriptDirectives> unknown = ParseScriptDirectives("#BERTH --gpuz 2\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("line 1"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("--gpuz"));
  Result<ScriptDirectives> bad = ParseScriptDirectives("#SBATCH --gres=gpu:many\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("--gres"));
}

TEST(SubmitOptionsTest, CommandLineBeatsBerthLinesBeatSbatchLines) {
  SubmitOptions command_line;
  command_line.gpus = 1;
  Result<ScriptDirectives> parsed =
      ParseScriptDirectives("#BERTH --gpus 2 --name b\n#SBATCH --gres=gpu:4 -J s --time=5\n");
  ASSERT_TRUE(parsed.ok());
  command_line.FillFrom(parsed->berth);
  command_line.FillFrom(parsed->sbatch);
  EXPECT_EQ(command_line.gpus, 1);
  EXPECT_EQ(command_line.name, "b");
  EXPECT_EQ(command_line.time, "5");
}

TEST(SubmitOptionsTest, BodyCarriesEveryFlag) {
  SubmitOptions o;
  o.gpus = 0;
  o.tasks = 3;
  o.cpus = 1.5;
  o.mem = "2G";
  o.estimate = "1h";
  o.priority = "-5";
  o.grace = "45";
  o.after = {"12", "13:afterany"};
  o.array = "0-9%2";
  o.env = {"K=V"};
  o.workdir = "/tmp";
  o.retries = 2;
  o.hold = true;
  o.preemptible = true;
  Result<json> body = SubmissionBody(o, {"python3", "-c", "print(1)"}, "");
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, json({{"command", {"python3", "-c", "print(1)"}},
                         {"tasks", 3},
                         {"gpus", 0},
                         {"cpus", 1.5},
                         {"memory_mib", 2048},
                         {"estimate_s", 3600},
                         {"grace_s", 45},
                         {"priority", -5},
                         {"preemptible", true},
                         {"depends_on", {"12", "13:afterany"}},
                         {"array", "0-9%2"},
                         {"env", {{"K", "V"}}},
                         {"workdir", "/tmp"},
                         {"retries", 2},
                         {"hold", true}}));
  o.env = {"novalue"};
  EXPECT_THAT(SubmissionBody(o, {"x"}, "").status().message(), HasSubstr("--env"));
  o.env.clear();
  o.output = "run-%q.out";
  EXPECT_EQ(SubmissionBody(o, {"x"}, "").status().message(),
            "--output: unknown pattern %q (known: %j %x %u %A %a %N %t %%)");
}

// Issue 26: where a job may run, from #SBATCH lines as Slurm spells them.
TEST(SubmitOptionsTest, SbatchPlacementLinesMeanWhatSlurmMeans) {
  for (const std::string script :
       {"#SBATCH --constraint=a100&ib --nodelist=gpu[01-04],gpu07 --exclude=gpu02\n",
        "#SBATCH -C 'a100&ib' -w gpu[01-04],gpu07 -x gpu02\n",
        "#SBATCH -Ca100&ib -wgpu[01-04],gpu07 -xgpu02\n"}) {
    Result<ScriptDirectives> parsed = ParseScriptDirectives(script);
    ASSERT_TRUE(parsed.ok()) << script << parsed.status().ToString();
    EXPECT_TRUE(parsed->warnings.empty()) << script;
    Result<json> body = SubmissionBody(parsed->sbatch, {}, "s");
    ASSERT_TRUE(body.ok()) << script << body.status().ToString();
    // A Slurm job without resource lines: one node, no GPU (issue 29).
    EXPECT_EQ(*body, json({{"script", "s"},
                           {"tasks", 1},
                           {"gpus", 0},
                           {"slurm_tasks_per_node", {1}},
                           {"constraint", "a100&ib"},
                           {"nodelist", "gpu[01-04],gpu07"},
                           {"exclude", "gpu02"}}))
        << script;
  }
  // Slurm has no --wait-for-nodes: an error, as for any option sbatch lacks.
  Result<ScriptDirectives> foreign = ParseScriptDirectives("#SBATCH --wait-for-nodes\n");
  ASSERT_FALSE(foreign.ok());
  EXPECT_THAT(foreign.status().message(), HasSubstr("--wait-for-nodes"));
}

// Issue 29: a typo lost its meaning with a warning like any unsupported
// option's; it is an error suggesting the option meant, and a real sbatch
// option Berth does not support is warned about by name and line.
TEST(SubmitOptionsTest, ASbatchTypoIsAnErrorWithASuggestion) {
  Result<ScriptDirectives> typo =
      ParseScriptDirectives("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-nod=2\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().message(),
            "line 3: #SBATCH: unknown option --gpus-per-nod (did you mean --gpus-per-node?)");
  Result<ScriptDirectives> unsupported =
      ParseScriptDirectives("#!/bin/bash\n#SBATCH --mail-user=a@b --gres=gpu:1\n");
  ASSERT_TRUE(unsupported.ok()) << unsupported.status().ToString();
  ASSERT_EQ(unsupported->warnings.size(), 1u);
  EXPECT_EQ(unsupported->warnings[0],
            "line 2: #SBATCH --mail-user is not supported by Berth; ignored");
  EXPECT_EQ(unsupported->sbatch.slurm->gres_gpus, 1);
}

TEST(SubmitOptionsTest, BerthPlacementLinesTakeSubmitsFlags) {
  Result<ScriptDirectives> parsed = ParseScriptDirectives(
      "#BERTH -C ib -w node-[1-2] -x node-2 --gpu-type 'A100-80GB|H100-80GB' "
      "--wait-for-nodes --gpus-in-one-group\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  Result<json> body = SubmissionBody(parsed->berth, {"true"}, "");
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, json({{"command", {"true"}},
                         {"gpu_type", "A100-80GB|H100-80GB"},
                         {"constraint", "ib"},
                         {"nodelist", "node-[1-2]"},
                         {"exclude", "node-2"},
                         {"wait_for_nodes", true},
                         {"gpus_in_one_group", true}}));
  Result<ScriptDirectives> long_form =
      ParseScriptDirectives("#BERTH --constraint=!spot --nodelist node-1 --exclude=node-3\n");
  ASSERT_TRUE(long_form.ok()) << long_form.status().ToString();
  EXPECT_EQ(long_form->berth.constraint, "!spot");
  EXPECT_EQ(long_form->berth.nodelist, "node-1");
  EXPECT_EQ(long_form->berth.exclude, "node-3");
}

TEST(SubmitOptionsTest, PlacementFlagsBeatBerthLinesBeatSbatchLines) {
  Result<ScriptDirectives> parsed = ParseScriptDirectives(
      "#BERTH --constraint b --exclude node-b\n"
      "#SBATCH --constraint=s --nodelist=node-s --exclude=node-s\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  SubmitOptions command_line;
  command_line.constraint = "c";
  command_line.FillFrom(parsed->berth);
  command_line.FillFrom(parsed->sbatch);
  EXPECT_EQ(command_line.constraint, "c");
  EXPECT_EQ(command_line.exclude, "node-b");
  EXPECT_EQ(command_line.nodelist, "node-s");

  SubmitOptions waits;
  waits.wait_for_nodes = true;
  SubmitOptions script;
  script.FillFrom(waits);
  EXPECT_EQ(script.wait_for_nodes, true);
}

TEST(SubmitOptionsTest, PlacementValuesTheServerWouldRefuseNameTheFlag) {
  SubmitOptions o;
  o.constraint = "a100&";
  Status bad = SubmissionBody(o, {"true"}, "").status();
  EXPECT_THAT(bad.message(), HasSubstr("--constraint"));
  EXPECT_THAT(bad.message(), HasSubstr("position 6"));
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  o.constraint = "(a100|h100)&!spot&rack=r1";
  EXPECT_TRUE(SubmissionBody(o, {"true"}, "").ok());

  for (const std::string type : {"", "A100|", "|A100", "A100||H100"}) {
    SubmitOptions typed;
    typed.gpu_type = type;
    EXPECT_THAT(SubmissionBody(typed, {"true"}, "").status().message(), HasSubstr("--gpu-type"))
        << type;
  }
  SubmitOptions empty_list;
  empty_list.nodelist = "";
  EXPECT_THAT(SubmissionBody(empty_list, {"true"}, "").status().message(), HasSubstr("--nodelist"));
  SubmitOptions empty_exclude;
  empty_exclude.exclude = "";
  EXPECT_THAT(SubmissionBody(empty_exclude, {"true"}, "").status().message(),
              HasSubstr("--exclude"));
}

}  // namespace
}  // namespace berth::cli

namespace berth::cli {
namespace {

// Issue 28: Pyxis's flags, on the command line, in #SBATCH and #BERTH lines.
TEST(SubmitOptionsTest, ContainerFlagsWithPyxisNames) {
  Result<ScriptDirectives> directives = ParseScriptDirectives(
      "#!/bin/bash\n"
      "#SBATCH --container-image=localhost/train:1\n"
      "#SBATCH --container-mounts=/data:/data:ro,/scratch:/tmp/s,/models\n"
      "#SBATCH --container-workdir /workspace\n"
      "#SBATCH --container-mount-home\n"
      "#BERTH --container-pull never\n"
      "python train.py\n");
  ASSERT_TRUE(directives.ok()) << directives.status().ToString();
  EXPECT_TRUE(directives->warnings.empty());
  SubmitOptions options = directives->berth;
  options.FillFrom(directives->sbatch);
  Result<json> body = SubmissionBody(options, {}, "python train.py\n");
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  const json expected = {{"image", "localhost/train:1"},
                         {"mounts",
                          {{{"source", "/data"}, {"target", "/data"}, {"read_only", true}},
                           {{"source", "/scratch"}, {"target", "/tmp/s"}, {"read_only", false}},
                           {{"source", "/models"}, {"target", "/models"}, {"read_only", false}}}},
                         {"workdir", "/workspace"},
                         {"mount_home", true},
                         {"pull", "never"}};
  EXPECT_EQ((*body)["container"], expected);
}

TEST(SubmitOptionsTest, ContainerFlagsAreCheckedNamingTheFlag) {
  SubmitOptions options;
  options.container_mounts = "/data:/data";
  EXPECT_THAT(SubmissionBody(options, {"true"}, "").status().message(),
              HasSubstr("--container-mounts: needs --container-image"));
  options.container_image = "img";
  options.container_mounts = "/data:/data:rx";
  EXPECT_THAT(SubmissionBody(options, {"true"}, "").status().message(),
              HasSubstr("--container-mounts: expected"));
  options.container_mounts.reset();
  options.container_pull = "sometimes";
  EXPECT_THAT(SubmissionBody(options, {"true"}, "").status().message(),
              HasSubstr("--container-pull: expected missing, never or always"));
  options.container_pull.reset();
  Result<json> body = SubmissionBody(options, {"true"}, "");
  ASSERT_TRUE(body.ok());
  EXPECT_EQ((*body)["container"], json({{"image", "img"}}));
  EXPECT_FALSE(SubmissionBody(SubmitOptions{}, {"true"}, "")->contains("container"));
}

}  // namespace
}  // namespace berth::cli
