// Signal names as Slurm's --signal and scancel --signal take them.
#include "protocol/signal_name.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace berth::protocol {
namespace {

TEST(SignalNameTest, NamesWithOrWithoutSigAndNumbersBecomeTheShortName) {
  EXPECT_EQ(CanonicalSignalName("USR1"), "USR1");
  EXPECT_EQ(CanonicalSignalName("SIGUSR1"), "USR1");
  EXPECT_EQ(CanonicalSignalName("usr2"), "USR2");
  EXPECT_EQ(CanonicalSignalName("10"), "USR1");
  EXPECT_EQ(CanonicalSignalName("15"), "TERM");
  EXPECT_EQ(CanonicalSignalName("SIGKILL"), "KILL");
}

TEST(SignalNameTest, UnknownNamesAndNumbersAreRefused) {
  EXPECT_EQ(CanonicalSignalName(""), std::nullopt);
  EXPECT_EQ(CanonicalSignalName("SIG"), std::nullopt);
  EXPECT_EQ(CanonicalSignalName("USR3"), std::nullopt);
  EXPECT_EQ(CanonicalSignalName("0"), std::nullopt);
  EXPECT_EQ(CanonicalSignalName("64"), std::nullopt);
  EXPECT_EQ(CanonicalSignalName("-1"), std::nullopt);
  EXPECT_EQ(CanonicalSignalName("10x"), std::nullopt);
}

TEST(SignalNameTest, TheNodeDeliversTheHostsNumber) {
  EXPECT_EQ(SignalNumber("USR1"), SIGUSR1);
  EXPECT_EQ(SignalNumber("TERM"), SIGTERM);
  EXPECT_EQ(SignalNumber("SIGUSR1"), std::nullopt);  // canonical names only
}

}  // namespace
}  // namespace berth::protocol
