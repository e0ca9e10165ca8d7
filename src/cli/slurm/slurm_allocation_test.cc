// Berth's reading of Slurm's resource options against what a real Slurm
// 22.05 allocated for the same options (tests/data/slurm/option_sets.txt,
// tests/data/slurm/golden/NAME.txt, recorded by scripts/slurm-golden.sh on
// 4 nodes x 8 GPUs x 32 CPUs x 256 GiB), field by field: nodes, tasks, and
// the GPUs, CPUs and memory of every node. Where Berth cannot match, the
// test states the difference (docs/from-slurm.md) rather than skipping it.
#include "cli/slurm/slurm_allocation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/slurm/sbatch_args.h"
#include "common/hostlist.h"
#include "core/default_memory.h"

namespace berth::cli::slurm {
namespace {

using ::testing::HasSubstr;

// The golden cluster's nodes.
constexpr NodeSize kGoldenNode{.gpus = 8, .cpus = 32, .memory_mib = 262144};

// The golden cluster's partition sets DefMemPerGPU=24576 DefMemPerCPU=3072
// (scripts/slurm-golden.sh); the Berth queue the same, as its operator
// would: default_memory_per_gpu_mib and default_memory_per_cpu_mib.
core::DefaultMemory GoldenQueueDefaults() {
  core::DefaultMemory defaults;
  defaults.per_gpu = core::MemoryMiB(24576);
  defaults.per_cpu = core::MemoryMiB(3072);
  return defaults;
}

// The memory of each node as Berth gives it, from the job sbatch submits:
// what it asks, or, asking none, what the server's admission gives its
// task (a node) in the golden queue: its GPUs and CPUs as sent, a CPU at
// least for each Slurm task there (server/queue_admission.h).
// The body sbatch sends for a script with `options` on the golden node.
nlohmann::json GoldenSbatchBody(const std::vector<std::string>& options) {
  std::vector<std::string> args = options;
  args.push_back("job.sh");
  Result<SbatchRequest> request = ParseSbatchArgs(args);
  EXPECT_TRUE(request.ok());
  if (!request.ok()) return nlohmann::json::object();
  std::vector<std::string> warnings;
  Result<nlohmann::json> body =
      SbatchBody(*request, "#!/bin/sh\ntrue\n", "/home/u", {}, warnings, kGoldenNode);
  EXPECT_TRUE(body.ok()) << body.status().message();
  return body.ok() ? *body : nlohmann::json::object();
}

// The memory of node `node` as Berth gives it.
int64_t BerthMemoryOfNode(const std::vector<std::string>& options, size_t node) {
  const nlohmann::json body = GoldenSbatchBody(options);
  const nlohmann::json& share = body.contains("task_shapes") ? body["task_shapes"][node] : body;
  if (share.contains("memory_mib")) return share["memory_mib"].get<int64_t>();
  // default_memory "per_cpu": the GPUs came with the node (--exclusive).
  const int64_t gpus = body.value("default_memory", "") == "per_cpu" ? 0 : share.value("gpus", 0);
  const core::TaskShape shape{core::WholeGpus(gpus), core::Cores(share.value("cpus", int64_t{0})),
                              core::MemoryMiB(0)};
  const std::vector<int32_t> tasks_per_node =
      body.value("slurm_tasks_per_node", std::vector<int32_t>{});
  // The server's admission: a node's own Slurm tasks for a share of its
  // own, the most any node holds for the one share of every node.
  const std::vector<int32_t> counted =
      body.contains("task_shapes") ? std::vector<int32_t>{tasks_per_node.at(node)} : tasks_per_node;
  return core::DefaultTaskMemory(GoldenQueueDefaults(), shape, core::LeastCpusOfSlurmNode(counted))
      .value();
}

std::string Golden(const std::string& path) {
  std::ifstream in(std::string(BERTH_SOURCE_DIR) + "/tests/data/slurm/" + path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// "sim[1-2,4]" -> 3; "sim1" -> 1.
int64_t HostCount(const std::string& hostlist) {
  const size_t open = hostlist.find('[');
  if (open == std::string::npos) return 1;
  int64_t count = 0;
  std::istringstream ranges(hostlist.substr(open + 1, hostlist.find(']') - open - 1));
  for (std::string range; std::getline(ranges, range, ',');) {
    const size_t dash = range.find('-');
    count += dash == std::string::npos
                 ? 1
                 : std::stoll(range.substr(dash + 1)) - std::stoll(range.substr(0, dash)) + 1;
  }
  return count;
}

// "28-31" -> 4; "0,2-3" -> 3.
int64_t CpuCount(const std::string& ids) {
  int64_t count = 0;
  std::istringstream ranges(ids);
  for (std::string range; std::getline(ranges, range, ',');) {
    const size_t dash = range.find('-');
    count += dash == std::string::npos
                 ? 1
                 : std::stoll(range.substr(dash + 1)) - std::stoll(range.substr(0, dash)) + 1;
  }
  return count;
}

// What Slurm allocated, from `scontrol show job -d` and the batch variables.
struct SlurmSide {
  int64_t num_nodes = 0;
  int64_t num_tasks = 0;
  int64_t num_cpus = 0;
  std::vector<int64_t> gpus, cpus, memory_mib;  // per node, node 0 first
  std::map<std::string, std::string> batch_env;
};

SlurmSide ReadGolden(const std::string& name) {
  SlurmSide side;
  std::istringstream in(Golden("golden/" + name + ".txt"));
  bool batch = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("== ", 0) == 0) {
      batch = line == "== batch";
      continue;
    }
    if (batch) {
      const size_t eq = line.find('=');
      if (eq != std::string::npos) side.batch_env[line.substr(0, eq)] = line.substr(eq + 1);
      continue;
    }
    std::map<std::string, std::string> fields;
    for (const std::string& word : Words(line)) {
      const size_t eq = word.find('=');
      if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
    }
    if (fields.contains("NumNodes")) {
      side.num_nodes = std::stoll(fields["NumNodes"]);
      side.num_cpus = std::stoll(fields["NumCPUs"]);
      side.num_tasks = std::stoll(fields["NumTasks"]);
    }
    // "  Nodes=sim[1-2] CPU_IDs=28-31 Mem=262144 GRES=gpu:4(IDX:0-3)"
    if (fields.contains("Nodes") && fields.contains("CPU_IDs")) {
      const std::string& gres = fields["GRES"];
      const int64_t gpus = gres.rfind("gpu:", 0) == 0 ? std::stoll(gres.substr(4)) : 0;
      for (int64_t i = 0; i < HostCount(fields["Nodes"]); ++i) {
        side.gpus.push_back(gpus);
        side.cpus.push_back(CpuCount(fields["CPU_IDs"]));
        side.memory_mib.push_back(std::stoll(fields["Mem"]));
      }
    }
  }
  return side;
}

struct OptionSet {
  std::string name;
  std::vector<std::string> args;
};

std::vector<OptionSet> OptionSets() {
  std::vector<OptionSet> sets;
  std::istringstream in(Golden("option_sets.txt"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> words = Words(line);
    sets.push_back({words[0], std::vector<std::string>(words.begin() + 1, words.end())});
  }
  return sets;
}

SlurmResourceOptions Read(const OptionSet& set) {
  std::vector<std::string> args = set.args;
  args.push_back("job.sh");
  Result<SbatchRequest> request = ParseSbatchArgs(args);
  EXPECT_TRUE(request.ok()) << set.name << ": " << request.status().message();
  EXPECT_TRUE(request->warnings.empty()) << set.name << ": " << request->warnings.front();
  return request->options.slurm.value_or(SlurmResourceOptions{});
}

TEST(SlurmAllocationGolden, EveryOptionSetHasAGoldenFile) {
  const std::vector<OptionSet> sets = OptionSets();
  ASSERT_EQ(sets.size(), 19u);
  for (const OptionSet& set : sets) EXPECT_GT(ReadGolden(set.name).num_nodes, 0) << set.name;
}

TEST(SlurmAllocationGolden, NodesTasksGpusCpusAndMemoryAreSlurms) {
  for (const OptionSet& set : OptionSets()) {
    SCOPED_TRACE(set.name);
    const SlurmSide slurm = ReadGolden(set.name);
    const SlurmResourceOptions options = Read(set);
    Result<SlurmAllocation> berth = AllocateSlurmJob(options, kGoldenNode);
    ASSERT_TRUE(berth.ok()) << berth.status().message();

    EXPECT_EQ(berth->nodes(), slurm.num_nodes);
    EXPECT_EQ(berth->tasks(), slurm.num_tasks);
    ASSERT_EQ(slurm.gpus.size(), static_cast<size_t>(slurm.num_nodes));
    ASSERT_EQ(berth->shares.size(), static_cast<size_t>(slurm.num_nodes));
    for (size_t node = 0; node < slurm.gpus.size(); ++node) {
      SCOPED_TRACE("node " + std::to_string(node));
      EXPECT_EQ(berth->shares[node].gpus, slurm.gpus[node]);
      EXPECT_EQ(berth->shares[node].cpus, slurm.cpus[node]);
      // A job asking no memory gets the partition's (queue's) default: per
      // GPU for a job that asked GPUs, per CPU for one that did not.
      EXPECT_EQ(BerthMemoryOfNode(set.args, node), slurm.memory_mib[node]);
    }
  }
}

TEST(SlurmAllocationGolden, TheTaskLayoutIsSlurmsTasksPerNode) {
  for (const OptionSet& set : OptionSets()) {
    SCOPED_TRACE(set.name);
    const SlurmSide slurm = ReadGolden(set.name);
    const SlurmResourceOptions options = Read(set);
    Result<SlurmAllocation> berth = AllocateSlurmJob(options, kGoldenNode);
    ASSERT_TRUE(berth.ok());
    std::vector<int> layout(berth->tasks_per_node.begin(), berth->tasks_per_node.end());
    if (options.ntasks || options.ntasks_per_node) {
      EXPECT_EQ(TasksPerNodeString(layout), slurm.batch_env.at("SLURM_TASKS_PER_NODE"));
    } else {
      // Without --ntasks or --ntasks-per-node the job's tasks are one per
      // node, as its srun steps run them; the batch SLURM_TASKS_PER_NODE
      // then lists the tasks the node's CPUs hold, which the agent counts
      // (agent/slurm_env_test.cc checks it against the same files).
      EXPECT_EQ(layout, std::vector<int>(static_cast<size_t>(berth->nodes()), 1));
    }
    EXPECT_EQ(std::to_string(berth->nodes()), slurm.batch_env.at("SLURM_NNODES"));
  }
}

TEST(SlurmAllocationGolden, TheVariablesSbatchExportsFromItsOptionsAreSlurms) {
  // The variables sbatch sets from the options it was given, and the
  // server's admission from the queue's default memory: present exactly
  // when Slurm set them, with Slurm's values.
  const std::vector<std::string> names = {
      "SLURM_NTASKS",       "SLURM_NPROCS",      "SLURM_NTASKS_PER_NODE", "SLURM_CPUS_PER_TASK",
      "SLURM_CPUS_PER_GPU", "SLURM_GPUS",        "SLURM_GPUS_PER_NODE",   "SLURM_GPUS_PER_TASK",
      "SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU", "SLURM_MEM_PER_GPU"};
  for (const OptionSet& set : OptionSets()) {
    SCOPED_TRACE(set.name);
    const SlurmSide slurm = ReadGolden(set.name);
    const nlohmann::json body = GoldenSbatchBody(set.args);
    nlohmann::json env = body.value("env", nlohmann::json::object());
    // Asking no memory, a job given the per-CPU default reads it, as
    // Slurm's (server/queue_admission.h).
    const int64_t gpus =
        body.value("default_memory", "") == "per_cpu" ? 0 : body.value("gpus", int64_t{0});
    const core::TaskShape node{core::WholeGpus(gpus), core::Cores(0), core::MemoryMiB(0)};
    if (const std::optional<core::MemoryMiB> per_cpu =
            core::PerCpuDefaultFor(GoldenQueueDefaults(), node);
        per_cpu && !body.contains("memory_mib")) {
      env["SLURM_MEM_PER_CPU"] = std::to_string(per_cpu->value());
    }
    for (const std::string& name : names) {
      if (slurm.batch_env.contains(name)) {
        EXPECT_EQ(env.value(name, "(unset)"), slurm.batch_env.at(name)) << name;
      } else {
        EXPECT_FALSE(env.contains(name)) << name;
      }
    }
  }
}

TEST(SlurmAllocation, UnevenTasksGiveEachNodeTheShareOfItsOwnTasks) {
  // -N 2 -n 3 --gpus-per-task=1: Slurm lays out 2 + 1, and each node holds
  // the GPUs and CPUs of its own tasks.
  SlurmResourceOptions options;
  options.nodes = 2;
  options.ntasks = 3;
  options.gpus_per_task = 1;
  Result<SlurmAllocation> allocation = AllocateSlurmJob(options, std::nullopt);
  ASSERT_TRUE(allocation.ok());
  EXPECT_EQ(allocation->tasks_per_node, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(allocation->shares, (std::vector<NodeShare>{{2, 2, 0}, {1, 1, 0}}));
  EXPECT_FALSE(allocation->even());
}

TEST(SlurmAllocation, GpusPerJobFillTheFirstNodesAndLeaveEveryNodeOne) {
  // As Slurm's _set_job_bits1: a node takes what the job still needs
  // beyond one GPU for each later node, as far as the node holds.
  SlurmResourceOptions options;
  options.nodes = 3;
  options.gpus = 12;
  options.mem_per_gpu_mib = 1000;
  Result<SlurmAllocation> allocation = AllocateSlurmJob(options, kGoldenNode);
  ASSERT_TRUE(allocation.ok());
  EXPECT_EQ(allocation->shares, (std::vector<NodeShare>{{8, 1, 8000}, {3, 1, 3000}, {1, 1, 1000}}));
  // Without a known node size, nothing caps the first node.
  allocation = AllocateSlurmJob(options, std::nullopt);
  ASSERT_TRUE(allocation.ok());
  EXPECT_EQ(allocation->shares[0].gpus, 10);
  // --gpus=0: no GPUs on any node.
  options.gpus = 0;
  allocation = AllocateSlurmJob(options, kGoldenNode);
  ASSERT_TRUE(allocation.ok());
  EXPECT_EQ(allocation->shares, (std::vector<NodeShare>(3, NodeShare{0, 1, 0})));
  // More than the nodes hold.
  options.gpus = 25;
  EXPECT_THAT(AllocateSlurmJob(options, kGoldenNode).status().message(),
              HasSubstr("do not fit 3 nodes of 8 GPUs"));
}

TEST(SlurmAllocation, AnUnevenJobSendsEachNodesShare) {
  const nlohmann::json body = GoldenSbatchBody({"-N", "2", "--gpus=6"});
  EXPECT_EQ(body["tasks"], 2);
  EXPECT_EQ(body["distinct_nodes"], true);
  ASSERT_TRUE(body.contains("task_shapes"));
  EXPECT_EQ(body["task_shapes"], nlohmann::json::parse(R"([{"gpus": 5}, {"gpus": 1}])"));
  // An even job sends one share for all.
  EXPECT_FALSE(GoldenSbatchBody({"-N", "2", "--gpus=16"}).contains("task_shapes"));
}

TEST(SlurmAllocation, TasksThatOverflowTheReferenceNodeTakeTheFewestNodes) {
  SlurmResourceOptions options;
  options.ntasks = 12;
  options.gpus_per_task = 1;
  Result<SlurmAllocation> allocation = AllocateSlurmJob(options, kGoldenNode);
  ASSERT_TRUE(allocation.ok());
  EXPECT_EQ(allocation->tasks_per_node, (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(allocation->shares[1].gpus, 6);
  // Without a known node size, everything on one node (as Slurm when it fits).
  allocation = AllocateSlurmJob(options, std::nullopt);
  ASSERT_TRUE(allocation.ok());
  EXPECT_EQ(allocation->tasks_per_node, (std::vector<int64_t>{12}));
}

TEST(SlurmAllocation, FewerTasksThanNodesShrinksTheNodesAsSlurmDoes) {
  SlurmResourceOptions options;
  options.nodes = 2;
  options.ntasks = 1;
  Result<SlurmAllocation> allocation = AllocateSlurmJob(options, std::nullopt);
  ASSERT_TRUE(allocation.ok());
  EXPECT_EQ(allocation->tasks_per_node, (std::vector<int64_t>{1}));
}

TEST(SlurmAllocation, RefusalsNameTheOption) {
  SlurmResourceOptions gpus;
  gpus.nodes = 2;
  gpus.gpus = 1;
  EXPECT_THAT(AllocateSlurmJob(gpus, std::nullopt).status().message(), HasSubstr("--gpus"));
  SlurmResourceOptions cpus;
  cpus.cpus_per_task = 2;
  cpus.cpus_per_gpu = 2;
  EXPECT_THAT(AllocateSlurmJob(cpus, std::nullopt).status().message(), HasSubstr("--cpus-per-gpu"));
  SlurmResourceOptions memory;
  memory.mem_mib = 1024;
  memory.mem_per_cpu_mib = 1024;
  EXPECT_THAT(AllocateSlurmJob(memory, std::nullopt).status().message(), HasSubstr("--mem"));
  SlurmResourceOptions exclusive;
  exclusive.exclusive = true;
  EXPECT_THAT(AllocateSlurmJob(exclusive, std::nullopt).status().message(),
              HasSubstr("--exclusive"));
  SlurmResourceOptions whole_node;
  whole_node.mem_mib = 0;
  EXPECT_THAT(AllocateSlurmJob(whole_node, std::nullopt).status().message(), HasSubstr("--mem=0"));
  SlurmResourceOptions tasks;
  tasks.nodes = 2;
  tasks.ntasks = 9;
  tasks.ntasks_per_node = 4;
  EXPECT_THAT(AllocateSlurmJob(tasks, std::nullopt).status().message(), HasSubstr("--ntasks"));
}

}  // namespace
}  // namespace berth::cli::slurm
