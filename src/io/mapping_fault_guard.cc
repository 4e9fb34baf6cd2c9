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
// claimed and read by the handler only once it is live.
struct GuardedMapping {
  enum State : int { kFree = 0, kClaimed = 1, kLive = 2 };
  static constexpr uintptr_t kNone = UINTPTR_MAX;
  std::atomic<int> state{kFree};
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

GuardedMapping* FindGuardedMapping(uintptr_t address) {
  for (GuardSlotBlock* block = guard_blocks.load(std::memory_order_acquire); block != nullptr;
       block = block->next) {
    for (GuardedMapping& slot : block->slots) {
      if (slot.state.load(std::memory_order_acquire) != GuardedMapping::kLive) continue;
      if (address >= slot.begin.load(std::memory_order_relaxed) &&
          address < slot.end.load(std::memory_order_relaxed)) {
        return &slot;
      }
    }
  }
  return nullptr;
}

// Hands a SIGBUS that is not ours to what was there before: the previous
// handler, or the default action (the faulting instruction runs again and
// the process ends with SIGBUS, as without this guard).
void ChainSigbusToPrevious(int signal, siginfo_t* info, void* context) {
  if ((previous_sigbus_action.sa_flags & SA_SIGINFO) != 0 &&
      previous_sigbus_action.sa_sigaction != nullptr) {
    previous_sigbus_action.sa_sigaction(signal, info, context);
    return;
  }
  if (previous_sigbus_action.sa_handler != SIG_DFL &&
      previous_sigbus_action.sa_handler != SIG_IGN) {
    previous_sigbus_action.sa_handler(signal);
    return;
  }
  // A fault's SIGBUS cannot be ignored: the kernel would deliver it with
  // the default action anyway.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(SIGBUS, &default_action, nullptr);
}

void OnSigbus(int signal, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
  GuardedMapping* slot = FindGuardedMapping(address);
  if (slot != nullptr) {
    // The file now ends before this page, so every later page of the
    // mapping is gone too: zeros over all of them at once (MAP_FIXED, in
    // place), or a scan over the rest of a large file would take a signal
    // per page. The raw system call: no interceptor (a sanitizer's) runs
    // inside the handler.
    const uintptr_t page = address / guard_page_size * guard_page_size;
    const uintptr_t end = slot->end.load(std::memory_order_relaxed);
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
    installed = sigaction(SIGBUS, &action, &previous_sigbus_action) == 0;
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
        slot.begin.store(reinterpret_cast<uintptr_t>(begin), std::memory_order_relaxed);
        slot.end.store(reinterpret_cast<uintptr_t>(begin) + size, std::memory_order_relaxed);
        slot.first_vanished.store(GuardedMapping::kNone, std::memory_order_relaxed);
        slot.state.store(GuardedMapping::kLive, std::memory_order_release);
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
  if (mapping != nullptr) mapping->state.store(GuardedMapping::kFree, std::memory_order_release);
}

const char* FirstVanishedPage(const GuardedMapping* mapping) {
  const uintptr_t page = mapping->first_vanished.load(std::memory_order_acquire);
  return page == GuardedMapping::kNone ? nullptr : reinterpret_cast<const char*>(page);
}

}  // namespace neardup::internal
