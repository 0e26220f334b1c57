#include "sandbox/time_zone.hpp"

#include <gtest/gtest.h>

namespace escouade::sandbox {
namespace {

TEST(TimeZone, NamesOfTheZoneDatabaseAreTaken) {
  for (const char* name : {"UTC", "Etc/UTC", "Europe/Paris", "America/Argentina/Buenos_Aires",
                           "Etc/GMT+5", "Etc/GMT-14", "America/Port-au-Prince", "Asia/Kolkata"})
    EXPECT_TRUE(valid_time_zone(name)) << name;
}

TEST(TimeZone, WhatIsNoNameIsRefused) {
  for (const char* name : {"", "/etc/passwd", "Europe/", "/Paris", "Europe//Paris", "../etc/x",
                           "Europe/./Paris", "Europe/Paris\n", "Europe Paris", ":Europe/Paris",
                           "-x", "Europe/-x", "CET;rm", "Europe/Par\xc3\xads"})
    EXPECT_FALSE(valid_time_zone(name)) << name;
  EXPECT_TRUE(valid_time_zone(std::string(64, 'a')));
  EXPECT_FALSE(valid_time_zone(std::string(65, 'a')));
}

TEST(TimeZone, AZoneinfoPathGivesItsName) {
  EXPECT_EQ(time_zone_of("/usr/share/zoneinfo/Europe/Paris"), "Europe/Paris");
  EXPECT_EQ(time_zone_of("/usr/share/zoneinfo/Etc/UTC"), "Etc/UTC");
  EXPECT_EQ(time_zone_of("/usr/share/zoneinfo/posix/Asia/Kolkata"), "Asia/Kolkata");
  EXPECT_EQ(time_zone_of("/usr/share/zoneinfo/right/Asia/Tokyo"), "Asia/Tokyo");
  EXPECT_EQ(time_zone_of("/var/db/timezone/zoneinfo/America/New_York"), "America/New_York");
  EXPECT_EQ(time_zone_of("/etc/localtime"), std::nullopt);  // a copied file: no name
  EXPECT_EQ(time_zone_of("/usr/share/zoneinfo/"), std::nullopt);
  EXPECT_EQ(time_zone_of("/usr/share/zoneinfo/Europe/../../../etc/passwd"), std::nullopt);
}

}  // namespace
}  // namespace escouade::sandbox
