// Fingerprint backends chosen by value: the portable CPU backend, the CUDA
// backend (built when CMake finds a CUDA compiler; runs where a GPU is
// present), or `auto` (the GPU when one is usable, else the CPU). Every
// backend gives bit-identical fingerprints for the same recipe (the CUDA
// backend computes pure-ASCII documents of word and whitespace recipes on the
// GPU and every other document on the CPU; docs/GPU.md).
// Cost: creating a CUDA fingerprinter initialises the device (tens to hundreds
// of ms the first time in a process). Thread safety: the functions are
// thread-safe; see Fingerprinter for the objects they return.
#ifndef NEARDUP_FINGERPRINT_BACKEND_H_
#define NEARDUP_FINGERPRINT_BACKEND_H_

#include <memory>
#include <string>
#include <string_view>

#include "neardup/fingerprinter.h"
#include "neardup/recipe.h"
#include "neardup/status.h"

namespace neardup {

enum class FingerprintBackend {
  kCpu,   // CreateCpuFingerprinter
  kCuda,  // the GPU; an error when not compiled in or no device is usable
  kAuto,  // kCuda when it can be created, else kCpu
};

// "cpu", "cuda" (also "gpu"), "auto".
Result<FingerprintBackend> ParseFingerprintBackend(std::string_view name);
std::string_view FingerprintBackendName(FingerprintBackend backend);

// Whether this build contains the CUDA backend.
bool CudaBackendCompiled();

// Ok when the CUDA backend is compiled in and a device is usable; otherwise
// the reason (Unavailable... as FailedPrecondition, naming what is missing).
Status CudaBackendAvailable();

// The fingerprinter of `backend`. kCuda fails with FailedPrecondition when
// CudaBackendAvailable() does; kAuto then returns the CPU backend. Recipe
// and selection errors are those of CreateCpuFingerprinter.
Result<std::unique_ptr<Fingerprinter>> CreateFingerprinter(FingerprintBackend backend,
                                                           const Recipe& recipe,
                                                           const SketchSelection& selection);

}  // namespace neardup

#endif  // NEARDUP_FINGERPRINT_BACKEND_H_
