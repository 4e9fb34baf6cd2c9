// Linked into every test binary of a ThreadSanitizer build only
// (cmake/NeardupTest.cmake): oneTBB runs with one thread for the whole
// process. Debian's oneTBB is not instrumented, so TSan cannot see the
// synchronisation of a parallel_for's workers and would report each
// hand-over between them and the caller as a race. With one TBB thread
// those bodies run on the calling thread, and what TSan checks is the
// concurrency the library makes itself and the tests start: readers and
// writers on their own threads, background merges (std::async).
#include <oneapi/tbb/global_control.h>

namespace {

const tbb::global_control one_tbb_thread(tbb::global_control::max_allowed_parallelism, 1);

}  // namespace
