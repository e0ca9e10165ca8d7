// Device isolation on cgroup v2: a BPF_PROG_TYPE_CGROUP_DEVICE program,
// attached to a task's cgroup, that refuses the character devices the task
// must not open (the GPUs of other tasks) and allows everything else. cgroup
// v1 does the same with the devices controller's devices.deny (task_cgroup.h).
//
// The program is assembled here, a handful of instructions per device,
// rather than compiled from C with clang and loaded with libbpf: it is
// tiny and fixed in shape (runc and crun generate theirs the same way),
// and the supervisor that attaches it is a fully static binary that links
// nothing but the C and C++ runtimes (libbpf would bring libelf and zlib).
// The kernel's verifier checks it at load time; the tests load, attach and
// run it on a real cgroup.
//
// The program stays attached after its file descriptors are closed, for as
// long as the cgroup exists: a restarted agent finds it in place.
#pragma once

#include <linux/bpf.h>

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::agent {

// A character device by number ("c 195:1" is /dev/nvidia1).
struct DeviceNumber {
  uint32_t major = 0;
  uint32_t minor = 0;
  auto operator<=>(const DeviceNumber&) const = default;
};

// The program: 0 (refuse) for any access to one of `denied` (character
// devices), 1 (allow) for everything else.
std::vector<bpf_insn> DenyDevicesProgram(const std::vector<DeviceNumber>& denied);

// Loads the program for `denied` and attaches it to the cgroup v2 directory
// `cgroup_dir` (BPF_F_ALLOW_MULTI, so programs of parent cgroups, such as
// systemd's, still apply: every program must allow an access). Needs
// CAP_BPF and CAP_SYS_ADMIN (root). The error carries the verifier's log.
Status AttachDeviceFilter(const std::string& cgroup_dir, const std::vector<DeviceNumber>& denied);

}  // namespace berth::agent
