// `berth sim`: replay a trace through the scheduling core under one or more
// policies and print the comparison.
#pragma once

#include <CLI/CLI.hpp>

namespace berth::cli {

// Adds the `sim` subcommand to `app`; it runs when parsed.
void AddSimCommand(CLI::App& app);

}  // namespace berth::cli
