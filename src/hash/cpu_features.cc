#include "hash/cpu_features.h"

#include "neardup/check.h"

namespace neardup::internal {
namespace {

CpuFeatures Probe() {
  CpuFeatures f;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  f.popcnt = __builtin_cpu_supports("popcnt");
  f.bmi2 = __builtin_cpu_supports("bmi2");
  f.avx2 = __builtin_cpu_supports("avx2");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512vbmi = __builtin_cpu_supports("avx512vbmi");
  f.avx512vbmi2 = __builtin_cpu_supports("avx512vbmi2");
  f.avx512vpopcntdq = __builtin_cpu_supports("avx512vpopcntdq");
  f.avx512bitalg = __builtin_cpu_supports("avx512bitalg");
  f.gfni = __builtin_cpu_supports("gfni");
#endif
  return f;
}

}  // namespace

CpuFeatures CpuFeatures::All() {
  CpuFeatures f;
  f.popcnt = f.bmi2 = f.avx2 = true;
  f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = true;
  f.avx512vbmi = f.avx512vbmi2 = f.avx512vpopcntdq = f.avx512bitalg = f.gfni = true;
  return f;
}

CpuFeatures CpuFeatures::LimitedTo(CpuPath path) const {
  switch (path) {
    case CpuPath::kReference:
    case CpuPath::kPortable:
      return CpuFeatures{};
    case CpuPath::kAvx2: {
      CpuFeatures f;
      f.popcnt = popcnt;
      f.bmi2 = bmi2;
      f.avx2 = avx2;
      return f;
    }
    case CpuPath::kAvx512:
      return *this;
  }
  return CpuFeatures{};
}

bool CpuFeatures::Covers(CpuPath path) const {
  switch (path) {
    case CpuPath::kReference:
    case CpuPath::kPortable:
      return true;
    case CpuPath::kAvx2:
      return avx2 && bmi2;
    case CpuPath::kAvx512:
      return avx512f && avx512bw && avx512dq && bmi2;
  }
  return false;
}

std::string CpuFeatures::ToString() const {
  std::string out;
  auto add = [&out](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(popcnt, "popcnt");
  add(bmi2, "bmi2");
  add(avx2, "avx2");
  add(avx512f, "avx512f");
  add(avx512bw, "avx512bw");
  add(avx512dq, "avx512dq");
  add(avx512vl, "avx512vl");
  add(avx512vbmi, "avx512vbmi");
  add(avx512vbmi2, "avx512vbmi2");
  add(avx512vpopcntdq, "avx512vpopcntdq");
  add(avx512bitalg, "avx512bitalg");
  add(gfni, "gfni");
  return out;
}

const CpuFeatures& HostCpuFeatures() {
  static const CpuFeatures features = Probe();
  return features;
}

CpuFeatures FeaturesAt(CpuPath path) {
  NEARDUP_CHECK(CpuSupports(path)) << "CPU path " << CpuPathName(path) << " is not supported";
  return HostCpuFeatures().LimitedTo(path);
}

}  // namespace neardup::internal
