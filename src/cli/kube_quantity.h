// Kubernetes resource quantities ("500m", "2", "1.5Gi", "129e6") read into
// Berth's integer units. Pure.
//
// The grammar is Kubernetes' own (k8s.io/apimachinery resource.Quantity):
//   quantity := number suffix
//   number   := digits | digits '.' digits | digits '.' | '.' digits
//   suffix   := '' | 'm' | 'k' | 'M' | 'G' | 'T' | 'P' | 'E'     (powers of 1000)
//             | 'Ki' | 'Mi' | 'Gi' | 'Ti' | 'Pi' | 'Ei'          (powers of 1024)
//             | ('e' | 'E') ['+' | '-'] digits                   (a power of ten)
// A leading '+' is allowed; a negative quantity is an error here, as no
// request can be. The value is read exactly from its text (no floating
// point) and rounded up to the unit asked for, as Kubernetes rounds a
// quantity up to the precision it keeps (cpu "0.0001" is 1m).
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace berth::cli {

// CPU as millicores: "250m" is 250, "2" is 2000, "0.5" is 500.
Result<int64_t> KubeMilliCpu(std::string_view text, std::string_view path);

// Memory (bytes in Kubernetes) as MiB, rounded up: "123Mi" is 123,
// "1.5Gi" is 1536, "128974848" is 123, "129e6" is 124, "1G" is 954.
Result<int64_t> KubeMemoryMiB(std::string_view text, std::string_view path);

// A count of devices ("nvidia.com/gpu: 2"): a whole number, else an error.
Result<int64_t> KubeWholeCount(std::string_view text, std::string_view path);

}  // namespace berth::cli
