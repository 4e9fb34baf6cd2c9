#include "io/mapping_fault_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>

namespace neardup::internal {

// A slot of the registry. `begin` and `end` are written while the slot is
// claimed and read by the handler only once it is live. `version` is a
// sequence lock around them: odd while a registration writes them, bumped
// by every registration and unregistration, so that the handler never
// pairs one mapping's begin with another's end in a slot being recycled.
// Session 18: the sequence lock has no stand-alone fences, which
// ThreadSanitizer does not model (a TSan build needed -Wno-tsan on GCC 12):
// the writer stores the fields with release after making the version odd,
// and the reader loads them with acquire before it reads the version again.
// A reader that loads a field a registration stored thereby sees that
// registration's odd version (or a later one) in its second read, and one
// whose first read is a registration's final, even version sees all of its
// fields: the guarantees of the fenced form (Boehm, "Can seqlocks get along
// with programming language memory models?", 2012).
struct GuardedMapping {
  enum State : int { kFree = 0, kClaimed = 1, kLive = 2 };
  static constexpr uintptr_t kNone = UINTPTR_MAX;
  std::atomic<int> state{kFree};
  std::atomic<uint64_t> version{0};
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<uintptr_t> first_vanished{kNone};  // the lowest zeroed page
};

namespace {

// Slots come in blocks, linked from the newest; blocks are never freed, so
// the handler may walk them at any time without a lock (the registry grows
// to the most mappings ever registered at once: a few per pipeline, one per
// input file for dedup's second pass).
constexpr size_t kGuardSlotsPerBlock = 64;

struct GuardSlotBlock {
  GuardedMapping slots[kGuardSlotsPerBlock];
  GuardSlotBlock* next = nullptr;
};

std::atomic<GuardSlotBlock*> guard_blocks{nullptr};
uintptr_t guard_page_size = 0;
struct sigaction previous_sigbus_action;

// The live slot whose range holds `address`, and that range's end as read
// under the slot's sequence lock. A slot that matched while its version
// held still was live and held the address at that moment; the faulting
// thread still reads that mapping (it must hold it while it reads), so it
// cannot be unregistered before the handler returns.
GuardedMapping* FindGuardedMapping(uintptr_t address, uintptr_t* end) {
  for (GuardSlotBlock* block = guard_blocks.load(std::memory_order_acquire); block != nullptr;
       block = block->next) {
    for (GuardedMapping& slot : block->slots) {
      const uint64_t version = slot.version.load(std::memory_order_acquire);
      if ((version & 1) != 0) continue;
      if (slot.state.load(std::memory_order_acquire) != GuardedMapping::kLive) continue;
      const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
      const uintptr_t slot_end = slot.end.load(std::memory_order_acquire);
      // Ordered after the acquire loads above (no fence needed).
      if (slot.version.load(std::memory_order_relaxed) != version) continue;
      if (address >= begin && address < slot_end) {
        *end = slot_end;
        return &slot;
      }
    }
  }
  return nullptr;
}

// Hands a SIGBUS that is not ours to what was there before: the previous
// handler, or the default action (the faulting instruction runs again and
// the process ends with SIGBUS, as without this guard).
// A SIGBUS sent by kill/sigqueue (si_code <= 0) has no fault address (its
// si_addr overlays the sender's pid), and BUS_MCEERR_AO is an asynchronous
// memory-error notice: neither is a read of a vanished page.
bool IsFault(const siginfo_t* info) { return info->si_code > 0 && info->si_code != BUS_MCEERR_AO; }

void ChainSigbusToPrevious(int signal, siginfo_t* info, void* context) {
  // sa_handler and sa_sigaction share storage: SIG_DFL/SIG_IGN are checked
  // first, whatever the flags say.
  const auto previous = previous_sigbus_action.sa_handler;
  if (previous == SIG_IGN && !IsFault(info)) return;  // a sent signal, ignored before
  if (previous != SIG_DFL && previous != SIG_IGN) {
    if ((previous_sigbus_action.sa_flags & SA_SIGINFO) != 0) {
      previous_sigbus_action.sa_sigaction(signal, info, context);
    } else {
      previous(signal);
    }
    return;
  }
  // The default action: for a fault, the instruction runs again on return
  // and takes it (a fault's SIGBUS cannot be ignored); a sent signal is
  // raised again, delivered once this handler returns.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(SIGBUS, &default_action, nullptr);
  if (!IsFault(info)) raise(SIGBUS);
}

void OnSigbus(int signal, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
  uintptr_t end = 0;
  GuardedMapping* slot = IsFault(info) ? FindGuardedMapping(address, &end) : nullptr;
  if (slot != nullptr) {
    // The file now ends before this page, so every later page of the
    // mapping is gone too: zeros over all of them at once (MAP_FIXED, in
    // place), or a scan over the rest of a large file would take a signal
    // per page. The raw system call: no interceptor (a sanitizer's) runs
    // inside the handler.
    const uintptr_t page = address / guard_page_size * guard_page_size;
    const long zeros = ::syscall(SYS_mmap, page, end - page, PROT_READ,
                                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (zeros != -1) {
      // Lock-free atomics are safe in a handler; faults of several threads
      // keep the lowest page.
      uintptr_t lowest = slot->first_vanished.load(std::memory_order_relaxed);
      while (page < lowest &&
             !slot->first_vanished.compare_exchange_weak(lowest, page, std::memory_order_release)) {
      }
      errno = saved_errno;
      return;
    }
  }
  ChainSigbusToPrevious(signal, info, context);
  errno = saved_errno;
}

bool InstallSigbusHandler() {
  static std::once_flag once;
  static bool installed = false;
  std::call_once(once, [] {
    guard_page_size = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction action {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&action.sa_mask);
    // The previous action is read before ours is in place: a SIGBUS that
    // comes in between already finds it.
    installed = sigaction(SIGBUS, nullptr, &previous_sigbus_action) == 0 &&
                sigaction(SIGBUS, &action, nullptr) == 0;
  });
  return installed;
}

}  // namespace

GuardedMapping* RegisterMapping(const char* begin, size_t size) {
  if (!InstallSigbusHandler()) return nullptr;
  while (true) {
    GuardSlotBlock* head = guard_blocks.load(std::memory_order_acquire);
    for (GuardSlotBlock* block = head; block != nullptr; block = block->next) {
      for (GuardedMapping& slot : block->slots) {
        int expected = GuardedMapping::kFree;
        if (!slot.state.compare_exchange_strong(expected, GuardedMapping::kClaimed,
                                                std::memory_order_acquire)) {
          continue;
        }
        // Odd while the range is written (the handler skips the slot). The
        // fields are stored with release, so that a handler that loads one
        // (acquire) also sees the odd version (see GuardedMapping).
        slot.version.fetch_add(1, std::memory_order_relaxed);
        slot.begin.store(reinterpret_cast<uintptr_t>(begin), std::memory_order_release);
        slot.end.store(reinterpret_cast<uintptr_t>(begin) + size, std::memory_order_release);
        slot.first_vanished.store(GuardedMapping::kNone, std::memory_order_release);
        slot.state.store(GuardedMapping::kLive, std::memory_order_release);
        slot.version.fetch_add(1, std::memory_order_release);
        return &slot;
      }
    }
    // Every slot taken: a new block in front (another thread may have
    // pushed one meanwhile; then look again).
    GuardSlotBlock* block = new GuardSlotBlock;
    block->next = head;
    if (!guard_blocks.compare_exchange_strong(head, block, std::memory_order_acq_rel)) delete block;
  }
}

void UnregisterMapping(GuardedMapping* mapping) {
  if (mapping == nullptr) return;
  // A new version first: a handler that read this slot's range before
  // sees the change and does not act on it.
  mapping->version.fetch_add(2, std::memory_order_release);
  mapping->state.store(GuardedMapping::kFree, std::memory_order_release);
}

const char* FirstVanishedPage(const GuardedMapping* mapping) {
  const uintptr_t page = mapping->first_vanished.load(std::memory_order_acquire);
  return page == GuardedMapping::kNone ? nullptr : reinterpret_cast<const char*>(page);
}

}  // namespace neardup::internal
