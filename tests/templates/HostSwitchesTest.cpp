// The helpers every HECTOR_* switch is read with
// (templates/traversal/HostSwitches.h): a switch compares with its one off
// value, and a test's override wins over the environment until it is set
// again.
#include "templates/traversal/HostSwitches.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace {

using hector::trav::envCount;
using hector::trav::envIs;
using hector::trav::OverridableSwitch;

// A name no other test or user sets.
constexpr const char *kName = "HECTOR_HOST_SWITCHES_TEST";

TEST(HostSwitches, EnvIsComparesTheWholeValue) {
  ::unsetenv(kName);
  EXPECT_FALSE(envIs(kName, "0"));
  ::setenv(kName, "0", 1);
  EXPECT_TRUE(envIs(kName, "0"));
  EXPECT_FALSE(envIs(kName, "1"));
  ::setenv(kName, "00", 1);
  EXPECT_FALSE(envIs(kName, "0")) << "only the exact off value turns it off";
  ::setenv(kName, "", 1);
  EXPECT_FALSE(envIs(kName, "0"));
  EXPECT_TRUE(envIs(kName, ""));
  ::unsetenv(kName);
}

TEST(HostSwitches, EnvCountTakesOnlyWholeNonNegativeNumbers) {
  ::unsetenv(kName);
  EXPECT_EQ(envCount(kName, 7), 7);
  ::setenv(kName, "12", 1);
  EXPECT_EQ(envCount(kName, 7), 12);
  ::setenv(kName, "-3", 1);
  EXPECT_EQ(envCount(kName, 7), 7);
  ::setenv(kName, "12x", 1);
  EXPECT_EQ(envCount(kName, 7), 7);
  ::unsetenv(kName);
}

TEST(HostSwitches, OverrideWinsUntilSetAgain) {
  OverridableSwitch s;
  EXPECT_TRUE(s.on(true));
  EXPECT_FALSE(s.on(false)) << "no override: the environment decides";
  EXPECT_TRUE(s.set(false, true)) << "set returns the value before";
  EXPECT_FALSE(s.on(true));
  EXPECT_FALSE(s.on(false));
  EXPECT_FALSE(s.set(true, true));
  EXPECT_TRUE(s.on(false)) << "an override of on holds against the environment";
}

} // namespace
