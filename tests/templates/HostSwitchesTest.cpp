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

TEST(HostSwitches, EnvironmentIsReadOnceThenOverridesWin) {
  // Off by the environment, read at the first use.
  ::setenv(kName, "off", 1);
  OverridableSwitch s{kName, "off"};
  EXPECT_FALSE(s.on()) << "no override: the environment decides";
  ::unsetenv(kName);
  EXPECT_FALSE(s.on()) << "the environment is read once";
  EXPECT_FALSE(s.byEnvironment());
  EXPECT_FALSE(s.set(true)) << "set returns the value before";
  EXPECT_TRUE(s.on()) << "an override of on holds against the environment";
  EXPECT_TRUE(s.set(false));
  EXPECT_FALSE(s.on());
  // Another value than the off value, or none, leaves a switch on.
  ::setenv(kName, "0", 1);
  const OverridableSwitch other{kName, "off"};
  EXPECT_TRUE(other.on());
  ::unsetenv(kName);
  const OverridableSwitch unset{kName, "0"};
  EXPECT_TRUE(unset.on());
}

} // namespace
