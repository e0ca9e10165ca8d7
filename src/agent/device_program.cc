#include "agent/device_program.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace berth::agent {
namespace {

// Registers by their role in the program (r1 holds the context on entry).
constexpr uint8_t kReturn = 0;
constexpr uint8_t kContext = 1;
constexpr uint8_t kType = 2;
constexpr uint8_t kMajor = 3;
constexpr uint8_t kMinor = 4;

bpf_insn Instruction(uint8_t code, uint8_t dst, uint8_t src, int16_t offset, int32_t immediate) {
  bpf_insn insn{};
  insn.code = code;
  insn.dst_reg = dst & 0xf;
  insn.src_reg = src & 0xf;
  insn.off = offset;
  insn.imm = immediate;
  return insn;
}

// dst = *(u32 *)(src + offset)
bpf_insn LoadWord(uint8_t dst, int16_t offset) {
  return Instruction(BPF_LDX | BPF_W | BPF_MEM, dst, kContext, offset, 0);
}
bpf_insn JumpIfNotEqual(uint8_t reg, uint32_t value, int16_t skip) {
  return Instruction(BPF_JMP | BPF_JNE | BPF_K, reg, 0, skip, static_cast<int32_t>(value));
}
bpf_insn Return(int32_t value) {
  return Instruction(BPF_ALU64 | BPF_MOV | BPF_K, kReturn, 0, 0, value);
}
bpf_insn Exit() { return Instruction(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }

long Bpf(int command, bpf_attr& attr) { return ::syscall(SYS_bpf, command, &attr, sizeof attr); }

}  // namespace

std::vector<bpf_insn> DenyDevicesProgram(const std::vector<DeviceNumber>& denied) {
  // struct bpf_cgroup_dev_ctx { u32 access_type; u32 major; u32 minor; }
  // access_type is (access << 16) | type; the type is the low half.
  std::vector<bpf_insn> program = {
      LoadWord(kType, offsetof(bpf_cgroup_dev_ctx, access_type)),
      Instruction(BPF_ALU64 | BPF_AND | BPF_K, kType, 0, 0, 0xffff),
      LoadWord(kMajor, offsetof(bpf_cgroup_dev_ctx, major)),
      LoadWord(kMinor, offsetof(bpf_cgroup_dev_ctx, minor)),
  };
  for (const DeviceNumber& device : denied) {
    // Not this device: skip the rest of the block (the skips count the
    // instructions after the jump).
    program.push_back(JumpIfNotEqual(kType, BPF_DEVCG_DEV_CHAR, 4));
    program.push_back(JumpIfNotEqual(kMajor, device.major, 3));
    program.push_back(JumpIfNotEqual(kMinor, device.minor, 2));
    program.push_back(Return(0));
    program.push_back(Exit());
  }
  program.push_back(Return(1));
  program.push_back(Exit());
  return program;
}

namespace {

// The program's fd, or the error with the verifier's words. The first try
// keeps no log: a log that overflows its buffer fails the load (ENOSPC), and
// a program that loads needs none.
Result<int> LoadProgram(const std::vector<bpf_insn>& program) {
  static constexpr char kLicense[] = "Apache-2.0";
  char log[16384] = {};
  for (const uint32_t log_level : {0u, 1u}) {
    bpf_attr load{};
    load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
    load.insns = reinterpret_cast<uint64_t>(program.data());
    load.insn_cnt = static_cast<uint32_t>(program.size());
    load.license = reinterpret_cast<uint64_t>(kLicense);
    if (log_level > 0) {
      load.log_buf = reinterpret_cast<uint64_t>(log);
      load.log_size = sizeof log;
      load.log_level = log_level;
    }
    const int fd = static_cast<int>(Bpf(BPF_PROG_LOAD, load));
    if (fd >= 0) return fd;
  }
  return Unavailable(std::string("cannot load the device filter: bpf(BPF_PROG_LOAD): ") +
                     std::strerror(errno) + (log[0] != '\0' ? std::string("; ") + log : ""));
}

}  // namespace

Status AttachDeviceFilter(const std::string& cgroup_dir, const std::vector<DeviceNumber>& denied) {
  BERTH_ASSIGN_OR_RETURN(const int program_fd, LoadProgram(DenyDevicesProgram(denied)));
  const int cgroup_fd = ::open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgroup_fd < 0) {
    const int error = errno;
    ::close(program_fd);
    return Unavailable("cannot open " + cgroup_dir + ": " + std::strerror(error));
  }
  bpf_attr attach{};
  attach.target_fd = static_cast<uint32_t>(cgroup_fd);
  attach.attach_bpf_fd = static_cast<uint32_t>(program_fd);
  attach.attach_type = BPF_CGROUP_DEVICE;
  attach.attach_flags = BPF_F_ALLOW_MULTI;
  const long attached = Bpf(BPF_PROG_ATTACH, attach);
  const int error = errno;
  ::close(cgroup_fd);
  ::close(program_fd);  // the attachment holds the program now
  if (attached != 0) {
    return Unavailable("cannot attach the device filter to " + cgroup_dir +
                       ": bpf(BPF_PROG_ATTACH): " + std::strerror(error));
  }
  return Status::Ok();
}

}  // namespace berth::agent
