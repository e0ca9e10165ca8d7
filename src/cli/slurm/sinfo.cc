// sinfo: Berth's nodes and queues as Slurm's nodes and partitions
// (docs/from-slurm.md).
#include <getopt.h>

#include <algorithm>
#include <cstdio>

#include "cli/slurm/sinfo_rows.h"
#include "cli/slurm/slurm_client.h"
#include "cli/slurm/slurm_commands.h"

namespace berth::cli::slurm {
namespace {

constexpr char kUsage[] =
    "Usage: sinfo [-N] [-h] [-p PARTITIONS] [-o FORMAT]\n"
    "Berth's nodes and queues in Slurm's sinfo form (docs/from-slurm.md).\n";

struct SinfoOptions {
  bool by_node = false;
  bool no_header = false;
  std::vector<std::string> partitions;
  std::string format;
};

SinfoOptions ParseOptions(int argc, char** argv) {
  enum { kHelp = 1000, kUsageOpt };
  static const option kLong[] = {{"Node", no_argument, nullptr, 'N'},
                                 {"noheader", no_argument, nullptr, 'h'},
                                 {"partition", required_argument, nullptr, 'p'},
                                 {"format", required_argument, nullptr, 'o'},
                                 {"all", no_argument, nullptr, 'a'},
                                 {"help", no_argument, nullptr, kHelp},
                                 {"usage", no_argument, nullptr, kUsageOpt},
                                 {nullptr, 0, nullptr, 0}};
  SinfoOptions options;
  optind = 1;
  int c = 0;
  while ((c = getopt_long(argc, argv, "Nhp:o:a", kLong, nullptr)) != -1) {
    switch (c) {
      case 'N':
        options.by_node = true;
        break;
      case 'h':
        options.no_header = true;
        break;
      case 'p':
        for (std::string& part : SplitList(optarg)) options.partitions.push_back(std::move(part));
        break;
      case 'o':
        options.format = optarg;
        break;
      case 'a':
        break;
      case kHelp:
      case kUsageOpt:
        std::fputs(kUsage, stdout);
        std::exit(0);
      default:
        std::fprintf(stderr, "Try \"%s --help\" for more information\n", argv[0]);
        std::exit(kSlurmExitError);
    }
  }
  if (optind < argc) Fail(argv[0], std::string("Unrecognized option: ") + argv[optind]);
  return options;
}

}  // namespace

int Sinfo(int argc, char** argv) {
  const std::string command = argv[0];
  const SinfoOptions options = ParseOptions(argc, argv);
  const bool default_format = options.format.empty();
  ParsedFormat parsed = ParseSinfoFormat(
      default_format ? (options.by_node ? kSinfoNodeFormat : kSinfoDefaultFormat) : options.format);
  for (const std::string& unknown : parsed.unknown) {
    std::fprintf(stderr, "%s: error: Invalid node format specification: %s\n", command.c_str(),
                 unknown.c_str());
  }
  const ApiClient client = ConnectOrFail(command);
  const Partitions loaded = LoadPartitions(command, client);
  std::vector<SinfoPartition> partitions;
  for (const std::string& name : loaded.names) {
    if (!options.partitions.empty() &&
        std::find(options.partitions.begin(), options.partitions.end(), name) ==
            options.partitions.end()) {
      continue;
    }
    SinfoPartition partition{name, name == loaded.default_name, std::nullopt};
    if (const auto it = loaded.max_time_s.find(name); it != loaded.max_time_s.end()) {
      partition.max_time_s = it->second;
    }
    partitions.push_back(std::move(partition));
  }
  nlohmann::json reply = GetOrFail(command, client, "/api/v1/nodes");
  std::vector<nlohmann::json> nodes;
  for (nlohmann::json& node : reply["nodes"]) nodes.push_back(std::move(node));
  const std::vector<SinfoRow> rows = SinfoRows(
      partitions, nodes, options.by_node ? SinfoGrouping::kByNode : SinfoGrouping::kByPartition,
      parsed.format);
  if (default_format) FitDefaultWidths(parsed.format, rows, options.by_node);
  std::string out = options.no_header ? "" : SinfoHeader(parsed.format);
  for (const SinfoRow& row : rows) out += SinfoLine(parsed.format, row);
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace berth::cli::slurm
