// How Slurm's commands write values: fields padded or cut to a width,
// durations as "1-02:03:04", times as "2026-12-05T09:30:00" (local), node
// lists in hostlist form ("sim[1-4]"), memory as "256G". Pure, except
// SlurmTime, which reads the local time zone as Slurm does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"

namespace berth::cli::slurm {

// What Slurm's `%[.]WIDTHx` does with a value: right-justified with '.',
// padded to `width`, and cut to it when `cut` (Slurm cuts most fields but
// not node lists). Width 0: the value as it is.
enum class Justify { kLeft, kRight };
enum class Cut { kNo, kYes };
std::string PadField(const std::string& value, int width, Justify justify, Cut cut);

// Seconds as squeue's TIME and TIME_LIMIT: "0:05", "1:02:03", "2-03:04:05";
// "INVALID" below zero or over a year, as Slurm.
std::string SlurmDuration(int64_t seconds);
// Seconds as scontrol's and sacct's: always "HH:MM:SS", "2-03:04:05".
std::string SlurmElapsed(int64_t seconds);
// "2026-12-05T09:30:00" in the local time zone (Slurm's default form).
std::string SlurmTime(core::Time time);
// The inverse, for sacct -S/-E: "2026-12-05", "2026-12-05T09:30[:00]",
// local. Nullopt if it is not one of these forms.
std::optional<core::Time> ParseSlurmTime(const std::string& text);

// Node names in Slurm's compressed form, sorted as Slurm sorts them:
// {"sim2", "sim1", "sim3", "gpu07"} is "gpu07,sim[1-3]". Zero-padded
// numbers stay padded and join only numbers of their width.
std::string CompressHostlist(std::vector<std::string> names);

// MiB as squeue's MIN_MEMORY (convert_num_unit, exact): 262144 is "256G",
// 1536 is "1.50G" (halves count as exact), 1000 is "1000M", 0 is "0".
std::string SlurmMemory(int64_t mib);

}  // namespace berth::cli::slurm
