// `berth server`, `berth dev` and `berth token create`.
#pragma once

#include <CLI/CLI.hpp>

namespace berth::cli {

void AddServerCommands(CLI::App& app);

}  // namespace berth::cli
