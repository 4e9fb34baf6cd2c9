#include "neardup/fingerprint_backend.h"

#include <string>

#if NEARDUP_HAVE_CUDA
#include "gpu/cuda_fingerprinter.h"
#include "gpu/cuda_pipeline.h"
#endif

namespace neardup {

Result<FingerprintBackend> ParseFingerprintBackend(std::string_view name) {
  if (name == "cpu") return FingerprintBackend::kCpu;
  if (name == "cuda" || name == "gpu") return FingerprintBackend::kCuda;
  if (name == "auto") return FingerprintBackend::kAuto;
  return InvalidArgumentError("unknown fingerprint backend \"" + std::string(name) +
                              "\" (expected cpu, gpu, cuda or auto)");
}

std::string_view FingerprintBackendName(FingerprintBackend backend) {
  switch (backend) {
    case FingerprintBackend::kCpu:
      return "cpu";
    case FingerprintBackend::kCuda:
      return "cuda";
    case FingerprintBackend::kAuto:
      return "auto";
  }
  return "unknown";
}

bool CudaBackendCompiled() { return NEARDUP_HAVE_CUDA != 0; }

Status CudaBackendAvailable() {
#if NEARDUP_HAVE_CUDA
  return internal::gpu::CudaDeviceStatus(nullptr);
#else
  return FailedPreconditionError(
      "the CUDA backend is not compiled in (no CUDA compiler was found when neardup was built)");
#endif
}

Result<std::unique_ptr<Fingerprinter>> CreateFingerprinter(FingerprintBackend backend,
                                                           const Recipe& recipe,
                                                           const SketchSelection& selection) {
  if (backend == FingerprintBackend::kCpu) return CreateCpuFingerprinter(recipe, selection);
  const Status available = CudaBackendAvailable();
  if (!available.ok()) {
    if (backend == FingerprintBackend::kAuto) return CreateCpuFingerprinter(recipe, selection);
    return available;
  }
#if NEARDUP_HAVE_CUDA
  Result<std::unique_ptr<Fingerprinter>> cuda =
      internal::gpu::CreateCudaFingerprinter(recipe, selection);
  // Recipe and selection errors are the same for every backend; a device
  // failure under kAuto falls back to the CPU.
  if (!cuda.ok() && backend == FingerprintBackend::kAuto &&
      cuda.status().code() == StatusCode::kInternal) {
    return CreateCpuFingerprinter(recipe, selection);
  }
  return cuda;
#else
  return available;
#endif
}

}  // namespace neardup
