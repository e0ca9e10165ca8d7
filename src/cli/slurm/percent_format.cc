#include "cli/slurm/percent_format.h"

#include <algorithm>

namespace berth::cli::slurm {

ParsedFormat ParsePercentFormat(const std::string& format,
                                const std::function<int(char)>& index_of) {
  ParsedFormat parsed;
  const size_t first = format.find('%');
  parsed.format.prefix = format.substr(0, first);
  size_t at = first;
  while (at != std::string::npos && at < format.size()) {
    size_t start = at + 1;
    while (start < format.size() && format[start] == '%') ++start;
    const size_t end = format.find('%', start);
    const std::string token = format.substr(start, end - start);
    at = end;
    if (token.empty()) continue;
    FormatField field;
    size_t i = 0;
    if (token[i] == '.') {
      field.justify = Justify::kRight;
      ++i;
    }
    while (i < token.size() && token[i] >= '0' && token[i] <= '9') {
      field.width = field.width * 10 + (token[i++] - '0');
    }
    const char letter = i < token.size() ? token[i++] : '\0';
    field.index = index_of(letter);
    field.suffix = token.substr(std::min(i, token.size()));
    if (field.index < 0) {
      parsed.unknown.push_back(std::string(1, letter));
      field.suffix = "%" + token;
    }
    parsed.format.fields.push_back(std::move(field));
  }
  return parsed;
}

}  // namespace berth::cli::slurm
