// How `berth` and `berthd` read their arguments: every repeatable option
// takes one value per occurrence (so `--env K=V -- sh -c CMD` leaves `--`
// and the command alone), and a bad flag or value exits 2 with a message
// naming the flag and what it wanted (docs/cli.md, "Exit codes").
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace berth::cli {

// Makes each repeatable (vector) option of `app` and its subcommands take
// exactly one value per occurrence: `--env A=1 --env B=2`. CLI11's default
// lets such an option eat every following word and then the `--` meant
// for the command. Call after every option is added.
void OneValuePerOccurrence(CLI::App& app);

// Parses argv (running the chosen command's callback). Returns the exit
// code: 0, or after --help 0, or after a bad flag or value 2 with
// "berth COMMAND: FLAG: expected ..., got ..." on stderr.
int ParseCommandLine(CLI::App& app, int argc, const char* const* argv);

// For a value the command line could not catch (a config file, a trace, a
// pool): prints "berth COMMAND: MESSAGE" on stderr and exits 2 (Exit of
// api_client.h with an InvalidArgument).
[[noreturn]] void FailCommand(std::string_view command, const std::string& message);

// The candidate nearest to `word` within two edits (a typo's likely
// meaning: "--gpus-per-nod" -> "--gpus-per-node"), or "" when none is.
std::string NearestName(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace berth::cli
