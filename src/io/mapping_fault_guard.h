// MappingFaultGuard: turns the SIGBUS that a truncated input file raises in
// a reader of its mapping into a flag the reader checks, instead of the end
// of the process.
//
// When another process truncates a file that is mapped here, the pages past
// its new end are gone: touching one raises SIGBUS (the bytes of the last
// page past the new end read as zeros, with no signal). One process-wide
// SIGBUS handler, installed on the first registration, looks the faulting
// address up among the registered input mappings; for one of them it maps
// anonymous zeros over the faulting page and the rest of the mapping (the
// file now ends before them all; mmap MAP_FIXED, a system call that is safe
// in a signal handler on Linux), records the page, and returns: the reader
// finishes its chunk on zeros, then finds the record (MappedInput::
// CheckRead) and reports DataLoss. A SIGBUS at any other address goes to
// the handler that was installed before this one (or, if there was none,
// kills the process as it would have).
//
// Cost: nothing on the reading path (a registered mapping is read as any
// other memory); a registration is a scan for a free slot (no lock, no
// system call after the first, which installs the handler); a fault is a
// scan of the slots and one mmap.
// Thread safety: the three functions may be called from any thread; a fault
// may happen on any thread. A handler that another library installs for
// SIGBUS after the first registration replaces this one (its faults then
// end the process as before).
#ifndef NEARDUP_IO_MAPPING_FAULT_GUARD_H_
#define NEARDUP_IO_MAPPING_FAULT_GUARD_H_

#include <cstddef>

namespace neardup::internal {

struct GuardedMapping;  // a slot of the registry (mapping_fault_guard.cc)

// Registers [begin, begin + size) as an input mapping whose faults are
// turned into zeros and a damage mark. nullptr when the handler could not be
// installed (the caller then reads the file without mapping it).
// REQUIRES: begin is page-aligned; the range stays mapped until
// UnregisterMapping.
GuardedMapping* RegisterMapping(const char* begin, size_t size);

// Forgets the mapping. REQUIRES: called before the range is unmapped, and
// after the last access to it.
void UnregisterMapping(GuardedMapping* mapping);

// The lowest page of the mapping found gone and replaced by zeros so far;
// nullptr while none was. One atomic load (acquire: the faulting thread's
// reads are ordered before it for the thread that sees the mark).
const char* FirstVanishedPage(const GuardedMapping* mapping);

}  // namespace neardup::internal

#endif  // NEARDUP_IO_MAPPING_FAULT_GUARD_H_
