// Slurm's `-o` formats, as squeue and sinfo read them: text before the
// first '%' is a prefix; each "%[.][WIDTH]LETTER" is a field, right-
// justified with '.', followed by the text up to the next '%' (Slurm's
// strtok: a run of '%' separates like one). Pure.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/slurm/slurm_text.h"

namespace berth::cli::slurm {

struct FormatField {
  int index = -1;  // into the command's field table; -1: only `suffix`
  int width = 0;
  Justify justify = Justify::kLeft;
  std::string suffix;  // printed after the field
};

struct PercentFormat {
  std::string prefix;
  std::vector<FormatField> fields;
};

// An unknown letter is kept as its text ("%x" prints "%x") and named in
// `unknown`, as Slurm does ("Invalid job format specification: x").
struct ParsedFormat {
  PercentFormat format;
  std::vector<std::string> unknown;
};
// `index_of` gives a letter's index in the field table, or -1.
ParsedFormat ParsePercentFormat(const std::string& format,
                                const std::function<int(char)>& index_of);

}  // namespace berth::cli::slurm
