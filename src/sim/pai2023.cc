// PAI 2023 list readers. The pipeline per file:
//
//   file --lines--> header --bind--> columns
//        each data line --split--> fields --column.apply--> item --row check--> item
//                                                       \--> BadRow{reason, message}
//
// Each list is a column schema (name -> setter) plus a check across fields,
// so both lists share one parser and one set of bad-row rules. Lines and
// fields follow the CSV rules of csv.h, which the trace reader shares.
#include "sim/pai2023.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <utility>
#include <variant>

#include "sim/csv.h"

namespace berth::sim {
namespace {

enum class Need { kRequired, kOptional };

template <typename Item>
struct Column {
  std::string_view name;
  Need need;
  // Stores the field in the item, or says what it must be ("must be ...").
  Status (*apply)(std::string_view value, Item& item);
};

// A whole decimal number >= 0: digits only, no sign, point or exponent.
std::optional<int64_t> ParseWhole(std::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Status StoreWhole(std::string_view value, int64_t max, int64_t& out) {
  const std::optional<int64_t> number = ParseWhole(value);
  if (!number || *number > max) {
    return InvalidArgument("must be a whole number 0.." + std::to_string(max));
  }
  out = *number;
  return Status::Ok();
}

Status StoreCount(std::string_view value, int32_t& out) {
  int64_t number = 0;
  BERTH_RETURN_IF_ERROR(StoreWhole(value, core::kMaxGpusPerNode, number));
  out = static_cast<int32_t>(number);
  return Status::Ok();
}

constexpr int64_t kMaxQuantity = int64_t{1} << 40;  // far above any real node

template <typename Item>
Status Ignore(std::string_view, Item&) {
  return Status::Ok();
}

// --- schemas ------------------------------------------------------------------

constexpr Column<Pai2023Pod> kPodColumns[] = {
    {"name", Need::kRequired,
     [](std::string_view v, Pai2023Pod& pod) {
       pod.name = v;
       return Status::Ok();
     }},
    {"cpu_milli", Need::kRequired,
     [](std::string_view v, Pai2023Pod& pod) {
       return StoreWhole(v, kMaxQuantity, pod.cpu_milli);
     }},
    {"memory_mib", Need::kRequired,
     [](std::string_view v, Pai2023Pod& pod) {
       return StoreWhole(v, kMaxQuantity, pod.memory_mib);
     }},
    {"num_gpu", Need::kRequired,
     [](std::string_view v, Pai2023Pod& pod) { return StoreCount(v, pod.num_gpu); }},
    {"gpu_milli", Need::kRequired,
     [](std::string_view v, Pai2023Pod& pod) { return StoreWhole(v, 1000, pod.gpu_milli); }},
    {"gpu_spec", Need::kOptional,
     [](std::string_view v, Pai2023Pod& pod) {
       if (v.find('|') != std::string_view::npos) {
         return InvalidArgument("must be one GPU model (lists of models are not supported)");
       }
       pod.gpu_spec = v;
       return Status::Ok();
     }},
    {"qos", Need::kOptional, Ignore<Pai2023Pod>},
    {"pod_phase", Need::kOptional, Ignore<Pai2023Pod>},
    {"creation_time", Need::kOptional, Ignore<Pai2023Pod>},
    {"deletion_time", Need::kOptional, Ignore<Pai2023Pod>},
    {"scheduled_time", Need::kOptional, Ignore<Pai2023Pod>},
};

constexpr Column<Pai2023Node> kNodeColumns[] = {
    {"sn", Need::kRequired,
     [](std::string_view v, Pai2023Node& node) {
       if (v.empty()) return InvalidArgument("must name the node");
       node.sn = v;
       return Status::Ok();
     }},
    {"cpu_milli", Need::kRequired,
     [](std::string_view v, Pai2023Node& node) {
       return StoreWhole(v, kMaxQuantity, node.cpu_milli);
     }},
    {"memory_mib", Need::kRequired,
     [](std::string_view v, Pai2023Node& node) {
       return StoreWhole(v, kMaxQuantity, node.memory_mib);
     }},
    {"gpu", Need::kRequired,
     [](std::string_view v, Pai2023Node& node) { return StoreCount(v, node.gpus); }},
    {"model", Need::kRequired,
     [](std::string_view v, Pai2023Node& node) {
       node.model = v;
       return Status::Ok();
     }},
};

// Checks across fields, after every field parsed.
std::optional<BadRow> CheckRow(const Pai2023Pod& pod) {
  const std::string got =
      ", got " + std::to_string(pod.gpu_milli) + " with num_gpu " + std::to_string(pod.num_gpu);
  if (pod.num_gpu == 0 && pod.gpu_milli != 0) {
    return BadRow{"bad gpu_milli", "gpu_milli: must be 0 when num_gpu is 0" + got};
  }
  if (pod.num_gpu == 1 && pod.gpu_milli == 0) {
    return BadRow{"bad gpu_milli", "gpu_milli: must be 1..1000 when num_gpu is 1" + got};
  }
  if (pod.num_gpu > 1 && pod.gpu_milli != 1000) {
    return BadRow{"bad gpu_milli",
                  "gpu_milli: must be 1000 when num_gpu > 1 (a share spans one GPU)" + got};
  }
  return std::nullopt;
}

std::optional<BadRow> CheckRow(Pai2023Node& node) {
  if (node.gpus > 0 && node.model.empty()) {
    return BadRow{"bad model", "model: must name the GPU model when gpu > 0, got ''"};
  }
  if (node.gpus == 0) node.model.clear();  // a CPU node has no GPU model
  return std::nullopt;
}

std::string UniqueKey(const Pai2023Pod&) { return {}; }  // pod names may repeat
std::string UniqueKey(const Pai2023Node& node) { return node.sn; }

// --- text ---------------------------------------------------------------------

Result<std::string> ReadText(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return NotFound(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open");
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return NotFound(path + ": read failed");
  if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f &&
      static_cast<unsigned char>(text[1]) == 0x8b) {
    return InvalidArgument(path + ": gzip data; the pai2023 lists are read as plain CSV");
  }
  return text;
}

template <typename Item>
std::string KnownColumns(std::span<const Column<Item>> columns) {
  std::string out;
  for (const Column<Item>& column : columns) {
    out += (out.empty() ? "" : ", ") + std::string(column.name);
  }
  return out;
}

// The column each header field feeds, in file order.
template <typename Item>
Result<std::vector<const Column<Item>*>> BindHeader(std::string_view header, std::string_view list,
                                                    std::span<const Column<Item>> columns) {
  std::vector<const Column<Item>*> bound;
  for (std::string_view name : SplitCsvFields(header)) {
    const Column<Item>* match = nullptr;
    for (const Column<Item>& column : columns) {
      if (column.name == name) match = &column;
    }
    const std::string quoted = "'" + std::string(name) + "'";
    if (match == nullptr) {
      return InvalidArgument("unknown column " + quoted + " for the pai2023 " + std::string(list) +
                             " list; known: " + KnownColumns(columns));
    }
    if (std::find(bound.begin(), bound.end(), match) != bound.end()) {
      return InvalidArgument("duplicate column " + quoted);
    }
    bound.push_back(match);
  }
  for (const Column<Item>& column : columns) {
    if (column.need == Need::kRequired &&
        std::find(bound.begin(), bound.end(), &column) == bound.end()) {
      return InvalidArgument("missing required column '" + std::string(column.name) +
                             "' for the pai2023 " + std::string(list) + " list");
    }
  }
  return bound;
}

template <typename Item>
std::variant<Item, BadRow> ParseRow(std::string_view line,
                                    const std::vector<const Column<Item>*>& columns) {
  std::variant<std::vector<std::string_view>, BadRow> split = SplitCsvRow(line, columns.size());
  if (BadRow* bad = std::get_if<BadRow>(&split)) return std::move(*bad);
  const std::vector<std::string_view>& fields = std::get<std::vector<std::string_view>>(split);
  Item item;
  for (size_t i = 0; i < fields.size(); ++i) {
    const Column<Item>& column = *columns[i];
    // An empty optional field means "not given".
    if (fields[i].empty() && column.need == Need::kOptional) continue;
    const Status status = column.apply(fields[i], item);
    if (!status.ok()) {
      const std::string name(column.name);
      return BadRow{"bad " + name,
                    name + ": " + status.message() + ", got '" + std::string(fields[i]) + "'"};
    }
  }
  if (std::optional<BadRow> bad = CheckRow(item)) return *std::move(bad);
  return item;
}

template <typename Item>
Result<Pai2023Load<Item>> ReadList(const std::string& path, std::string_view list,
                                   std::span<const Column<Item>> schema,
                                   const Pai2023ReadOptions& options) {
  Result<std::string> text = ReadText(path);
  if (!text.ok()) return text.status();
  CsvLines lines(StripUtf8Bom(*text));
  const std::optional<std::string_view> header = lines.Next();
  if (!header || IsBlank(*header)) {
    return InvalidArgument(path + ":1: no header; the pai2023 " + std::string(list) +
                           " list has columns " + KnownColumns(schema));
  }
  Result<std::vector<const Column<Item>*>> columns = BindHeader(*header, list, schema);
  if (!columns.ok()) return InvalidArgument(path + ":1: " + columns.status().message());

  Pai2023Load<Item> load;
  std::set<std::string, std::less<>> keys;
  while (const std::optional<std::string_view> line = lines.Next()) {
    if (IsBlank(*line)) continue;  // not a row
    ++load.rows;
    std::variant<Item, BadRow> row = ParseRow(*line, *columns);
    if (Item* item = std::get_if<Item>(&row)) {
      const std::string key = UniqueKey(*item);
      if (!key.empty() && !keys.insert(key).second) {
        row = BadRow{"duplicate sn", "sn: '" + key + "' appears on an earlier line"};
      } else {
        item->line = lines.number();
        load.items.push_back(std::move(*item));
        continue;
      }
    }
    const BadRow& bad = std::get<BadRow>(row);
    std::string message = path + ":" + std::to_string(lines.number()) + ": " + bad.message;
    if (options.strict) return InvalidArgument(std::move(message));
    ++load.skipped[bad.reason];
    if (load.examples.size() < options.max_examples) load.examples.push_back(std::move(message));
  }
  return load;
}

}  // namespace

Result<Pai2023Load<Pai2023Pod>> ReadPai2023Pods(const std::string& path,
                                                const Pai2023ReadOptions& options) {
  return ReadList<Pai2023Pod>(path, "pod", kPodColumns, options);
}

Result<Pai2023Load<Pai2023Node>> ReadPai2023Nodes(const std::string& path,
                                                  const Pai2023ReadOptions& options) {
  return ReadList<Pai2023Node>(path, "node", kNodeColumns, options);
}

core::TaskShape ToTaskShape(const Pai2023Pod& pod) {
  core::TaskShape shape;
  shape.cpu = core::MilliCpu(pod.cpu_milli);
  shape.memory = core::MemoryMiB(pod.memory_mib);
  if (pod.num_gpu == 1 && pod.gpu_milli < 1000) {
    shape.gpu = core::MilliGpu(pod.gpu_milli);
  } else {
    shape.gpu = core::WholeGpus(pod.num_gpu);
  }
  return shape;
}

core::NodeSpec ToNodeSpec(const Pai2023Node& node) {
  return core::MakeNodeSpec(node.sn, node.model, node.gpus, core::MilliCpu(node.cpu_milli),
                            core::MemoryMiB(node.memory_mib));
}

}  // namespace berth::sim
