#include "launch_settings.h"

#include <charconv>
#include <cstdint>
#include <string_view>

namespace neardup::mpi {
namespace {

// A positive decimal count, the whole of `text`; nullopt otherwise.
std::optional<uint64_t> PositiveCount(const char* text) {
  if (text == nullptr) return std::nullopt;
  const std::string_view digits(text);
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size() || value == 0) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<EnvironmentSetting> SingleHostPml(
    const std::function<const char*(const char*)>& get) {
  if (get("OMPI_MCA_pml") != nullptr) return std::nullopt;
  const std::optional<uint64_t> size = PositiveCount(get("OMPI_COMM_WORLD_SIZE"));
  const std::optional<uint64_t> local = PositiveCount(get("OMPI_COMM_WORLD_LOCAL_SIZE"));
  if (!size || !local || *size != *local) return std::nullopt;
  return EnvironmentSetting{.name = "OMPI_MCA_pml", .value = "ob1"};
}

}  // namespace neardup::mpi
