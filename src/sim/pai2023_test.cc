#include "sim/pai2023.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <utility>

#include "common/testing/temp_dir.h"

namespace berth::sim {
namespace {

using test_support::TempDir;

template <typename Item>
int64_t SkippedTotal(const Pai2023Load<Item>& load) {
  int64_t total = 0;
  for (const auto& [reason, count] : load.skipped) total += count;
  return total;
}

// The reader's promise: every data row read is an item or counted.
template <typename Item>
void ExpectEveryRowAccounted(const Pai2023Load<Item>& load) {
  EXPECT_EQ(load.rows, static_cast<int64_t>(load.items.size()) + SkippedTotal(load));
}

constexpr std::string_view kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

Pai2023Load<Pai2023Pod> ReadPodsOk(const std::string& path,
                                   const Pai2023ReadOptions& options = {}) {
  Result<Pai2023Load<Pai2023Pod>> load = ReadPai2023Pods(path, options);
  EXPECT_TRUE(load.ok()) << load.status().ToString();
  return load.ok() ? std::move(load).value() : Pai2023Load<Pai2023Pod>{};
}

Pai2023Load<Pai2023Node> ReadNodesOk(const std::string& path) {
  Result<Pai2023Load<Pai2023Node>> load = ReadPai2023Nodes(path);
  EXPECT_TRUE(load.ok()) << load.status().ToString();
  return load.ok() ? std::move(load).value() : Pai2023Load<Pai2023Node>{};
}

TEST(Pai2023PodsTest, ReadsRowsAndShapes) {
  TempDir dir;
  const std::string path =
      dir.Write("pods.csv", std::string(kPodHeader) +
                                "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\r\n"
                                "p1,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
                                "\n"
                                "p2,4000,8192,0,0,,BE,Pending,5,6,\n"
                                "p3,64000,262144,8,1000,V100M32,LS,Running,1,2,1\n");
  const Pai2023Load<Pai2023Pod> load = ReadPodsOk(path);
  ExpectEveryRowAccounted(load);
  ASSERT_EQ(load.items.size(), 4u);
  EXPECT_EQ(load.rows, 4);
  EXPECT_EQ(load.items[0].name, "p0");
  EXPECT_EQ(load.items[0].line, 2);
  EXPECT_EQ(load.items[2].line, 5);  // the blank line is not a row but is a line
  EXPECT_EQ(load.items[3].gpu_spec, "V100M32");

  const core::TaskShape whole = ToTaskShape(load.items[0]);
  EXPECT_EQ(whole.gpu, core::WholeGpus(1));
  EXPECT_EQ(whole.cpu, core::MilliCpu(12000));
  EXPECT_EQ(whole.memory, core::MemoryMiB(16384));
  EXPECT_EQ(ToTaskShape(load.items[1]).gpu, core::MilliGpu(460));
  EXPECT_TRUE(ToTaskShape(load.items[1]).wants_share());
  EXPECT_EQ(ToTaskShape(load.items[2]).gpu, core::MilliGpu(0));
  EXPECT_EQ(ToTaskShape(load.items[3]).gpu, core::WholeGpus(8));
}

TEST(Pai2023PodsTest, ColumnsBindByNameAndOptionalOnesMayBeAbsent) {
  TempDir dir;
  const std::string path = dir.Write("pods.csv",
                                     "\xEF\xBB\xBFgpu_milli,num_gpu,memory_mib,cpu_milli,name\n"
                                     "250,1,1024,500,a\n");
  const Pai2023Load<Pai2023Pod> load = ReadPodsOk(path);
  ASSERT_EQ(load.items.size(), 1u);
  EXPECT_EQ(load.items[0].name, "a");
  EXPECT_EQ(load.items[0].cpu_milli, 500);
  EXPECT_EQ(load.items[0].memory_mib, 1024);
  EXPECT_EQ(load.items[0].gpu_milli, 250);
  EXPECT_EQ(load.items[0].gpu_spec, "");
}

TEST(Pai2023PodsTest, BadRowsAreCountedByReasonWithExamples) {
  TempDir dir;
  const std::string path = dir.Write("pods.csv", std::string(kPodHeader) +
                                                     "ok,1000,1024,1,500,,LS,Running,0,1,0\n"
                                                     "a,-5,1024,1,500,,LS,Running,0,1,0\n"
                                                     "b,1000,1024,1,0,,LS,Running,0,1,0\n"
                                                     "c,1000,1024,2,500,,LS,Running,0,1,0\n"
                                                     "d,1000,1024,0,300,,LS,Running,0,1,0\n"
                                                     "e,1000,1024,1,1500,,LS,Running,0,1,0\n"
                                                     "f,1000,1024,99,1000,,LS,Running,0,1,0\n"
                                                     "g,1000,1024,1,500,A|B,LS,Running,0,1,0\n"
                                                     "h,1000,1024,1,500\n"
                                                     "\"i\",1000,1024,1,500,,LS,Running,0,1,0\n"
                                                     "j,1.5,1024,1,500,,LS,Running,0,1,0\n");
  const Pai2023Load<Pai2023Pod> load = ReadPodsOk(path);
  ExpectEveryRowAccounted(load);
  ASSERT_EQ(load.items.size(), 1u);
  EXPECT_EQ(load.skipped.at("bad cpu_milli"), 2);
  EXPECT_EQ(load.skipped.at("bad gpu_milli"), 4);  // b, c, d, e
  EXPECT_EQ(load.skipped.at("bad num_gpu"), 1);
  EXPECT_EQ(load.skipped.at("bad gpu_spec"), 1);
  EXPECT_EQ(load.skipped.at("wrong column count"), 1);
  EXPECT_EQ(load.skipped.at("quoted field"), 1);
  ASSERT_EQ(load.examples.size(), 10u);
  EXPECT_EQ(load.examples[0],
            path + ":3: cpu_milli: must be a whole number 0..1099511627776, got '-5'");
  EXPECT_EQ(load.examples[1],
            path + ":4: gpu_milli: must be 1..1000 when num_gpu is 1, got 0 with num_gpu 1");
  EXPECT_NE(load.examples[2].find("must be 1000 when num_gpu > 1"), std::string::npos);
}

TEST(Pai2023PodsTest, StrictFailsOnTheFirstBadRow) {
  TempDir dir;
  const std::string path = dir.Write("pods.csv", std::string(kPodHeader) +
                                                     "ok,1000,1024,1,500,,LS,Running,0,1,0\n"
                                                     "a,1000,x,1,500,,LS,Running,0,1,0\n");
  Pai2023ReadOptions options;
  options.strict = true;
  Result<Pai2023Load<Pai2023Pod>> load = ReadPai2023Pods(path, options);
  ASSERT_FALSE(load.ok());
  EXPECT_EQ(load.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(load.status().message(),
            path + ":3: memory_mib: must be a whole number 0..1099511627776, got 'x'");
}

TEST(Pai2023PodsTest, HeaderErrorsNameTheColumn) {
  TempDir dir;
  const std::pair<std::string, std::string> cases[] = {
      {"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpus\n", "unknown column 'gpus'"},
      {"name,cpu_milli,memory_mib,num_gpu\n", "missing required column 'gpu_milli'"},
      {"name,name,cpu_milli,memory_mib,num_gpu,gpu_milli\n", "duplicate column 'name'"},
      {"", "no header"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(message);
    Result<Pai2023Load<Pai2023Pod>> load = ReadPai2023Pods(dir.Write("pods.csv", text));
    ASSERT_FALSE(load.ok());
    EXPECT_NE(load.status().message().find(message), std::string::npos) << load.status().message();
  }
  Result<Pai2023Load<Pai2023Pod>> missing = ReadPai2023Pods(dir.Write("x", "") + ".absent");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  Result<Pai2023Load<Pai2023Pod>> gzip =
      ReadPai2023Pods(dir.Write("pods.csv.gz", std::string("\x1f\x8b\x08\x00", 4)));
  ASSERT_FALSE(gzip.ok());
  EXPECT_NE(gzip.status().message().find("gzip"), std::string::npos);
}

TEST(Pai2023NodesTest, ReadsNodesAndRejectsBadOnes) {
  TempDir dir;
  const std::string path = dir.Write("nodes.csv",
                                     "sn,cpu_milli,memory_mib,gpu,model\n"
                                     "n0,96000,393216,8,G2\n"
                                     "n1,32000,262144,0,\n"
                                     "n2,32000,262144,2,\n"
                                     "n0,96000,393216,8,G2\n"
                                     "n3,96000,393216,65,G2\n"
                                     "n4,8000,32768,1,V100M16\n");
  const Pai2023Load<Pai2023Node> load = ReadNodesOk(path);
  ExpectEveryRowAccounted(load);
  ASSERT_EQ(load.items.size(), 3u);
  EXPECT_EQ(load.skipped.at("bad model"), 1);
  EXPECT_EQ(load.skipped.at("duplicate sn"), 1);
  EXPECT_EQ(load.skipped.at("bad gpu"), 1);
  EXPECT_EQ(load.examples[1], path + ":5: sn: 'n0' appears on an earlier line");

  const core::NodeSpec spec = ToNodeSpec(load.items[0]);
  EXPECT_EQ(spec.name, "n0");
  EXPECT_EQ(spec.gpu_type, "G2");
  EXPECT_EQ(spec.gpus.size(), 8u);
  EXPECT_EQ(spec.cpu, core::MilliCpu(96000));
  EXPECT_EQ(spec.memory, core::MemoryMiB(393216));
  EXPECT_TRUE(ToNodeSpec(load.items[1]).gpus.empty());
  EXPECT_EQ(load.items[2].line, 7);
}

// Real lists must be present: a missing file fails the test, never skips it.
std::string SharedList(const std::string& name) {
  const std::string path =
      std::string(BERTH_SHARED_DIR) + "/data/traces/alibaba-pai-gpu-2023/" + name;
  EXPECT_TRUE(std::filesystem::is_regular_file(path)) << "missing shared list " << path;
  return path;
}

TEST(Pai2023RealListsTest, ReadEveryRow) {
  const Pai2023Load<Pai2023Pod> pods = ReadPodsOk(SharedList("openb_pod_list_default.csv"));
  EXPECT_EQ(pods.rows, 8152);
  EXPECT_EQ(pods.items.size(), 8152u);
  EXPECT_TRUE(pods.skipped.empty());
  int64_t shares = 0;
  for (const Pai2023Pod& pod : pods.items) shares += ToTaskShape(pod).wants_share() ? 1 : 0;
  EXPECT_EQ(shares, 3078);  // the README's fractional 1-GPU pods

  const Pai2023Load<Pai2023Node> nodes = ReadNodesOk(SharedList("openb_node_list_gpu_node.csv"));
  EXPECT_EQ(nodes.items.size(), 1213u);
  EXPECT_TRUE(nodes.skipped.empty());
  int64_t gpus = 0;
  for (const Pai2023Node& node : nodes.items) gpus += node.gpus;
  EXPECT_EQ(gpus, 6212);

  const Pai2023Load<Pai2023Node> all = ReadNodesOk(SharedList("openb_node_list_all_node.csv"));
  EXPECT_EQ(all.items.size(), 1523u);
  EXPECT_TRUE(all.skipped.empty());
}

}  // namespace
}  // namespace berth::sim
