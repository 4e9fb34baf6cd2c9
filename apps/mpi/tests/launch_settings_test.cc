// launch_settings.h: when neardup-mpi asks Open MPI for the "ob1"
// point-to-point layer (every rank on one host, the launcher set none).
#include "launch_settings.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

namespace neardup::mpi {
namespace {

std::optional<EnvironmentSetting> With(const std::map<std::string, std::string>& environment) {
  return SingleHostPml([&](const char* name) -> const char* {
    const auto found = environment.find(name);
    return found == environment.end() ? nullptr : found->second.c_str();
  });
}

TEST(MpiLaunchSettingsTest, OneHostGetsOb1) {
  const std::optional<EnvironmentSetting> setting =
      With({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  ASSERT_TRUE(setting.has_value());
  EXPECT_EQ(setting->name, "OMPI_MCA_pml");
  EXPECT_EQ(setting->value, "ob1");
  EXPECT_TRUE(With({{"OMPI_COMM_WORLD_SIZE", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}}));
}

TEST(MpiLaunchSettingsTest, SeveralHostsKeepOpenMpisChoice) {
  EXPECT_FALSE(With({{"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}}));
}

TEST(MpiLaunchSettingsTest, TheLaunchersLayerWins) {
  EXPECT_FALSE(With({{"OMPI_COMM_WORLD_SIZE", "2"},
                     {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                     {"OMPI_MCA_pml", "ucx"}}));
  // Set but empty is still the launcher's.
  EXPECT_FALSE(With(
      {{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}, {"OMPI_MCA_pml", ""}}));
}

TEST(MpiLaunchSettingsTest, UnknownOrMalformedCountsChangeNothing) {
  // Not Open MPI's mpirun (srun, MPICH's hydra, a plain start): no counts.
  EXPECT_FALSE(With({}));
  EXPECT_FALSE(With({{"OMPI_COMM_WORLD_SIZE", "2"}}));
  EXPECT_FALSE(With({{"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}));
  for (const char* bad : {"", "0", "-2", "2x", " 2", "2 ", "x", "99999999999999999999999"}) {
    EXPECT_FALSE(With({{"OMPI_COMM_WORLD_SIZE", bad}, {"OMPI_COMM_WORLD_LOCAL_SIZE", bad}}))
        << "'" << bad << "'";
  }
}

}  // namespace
}  // namespace neardup::mpi
