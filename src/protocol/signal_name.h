// Signal names as Slurm and kill(1) write them: "USR1", "SIGUSR1" or a
// number ("10"). The wire (the API, the agent protocol) carries the short
// name, so the server and the nodes need not agree on numbers in JSON; the
// node turns it into its own number when it delivers it.
//
// Only the standard signals 1..31 are known (Slurm's list is the same set);
// real-time signals are refused.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace berth::protocol {

// "USR1" for "USR1", "usr1", "SIGUSR1" or "10"; nullopt for anything else.
std::optional<std::string> CanonicalSignalName(std::string_view text);

// The host's number of a canonical name ("USR1" -> SIGUSR1); nullopt for a
// name CanonicalSignalName would not give.
std::optional<int> SignalNumber(std::string_view name);

// What a refusal says is accepted.
inline constexpr char kSignalExpected[] = "a signal name (USR1, SIGUSR1) or number (10)";

}  // namespace berth::protocol
