#pragma once

// Large allocations backed by 2 MiB pages, for the programs (not the library).
//
// The engine's big matrices (a T×T score matrix per head, the partial
// outputs R, Q, K, V, U, concat) are read a row at a time down their
// columns or streamed on every edit: with 4 KiB pages nearly every row is a
// TLB miss, and a fresh engine or a Compare snapshot spends most of its time
// in page faults. The engine advises the interior of its own largest
// matrices (advise_huge_pages), but an allocation glibc maps is not aligned
// to 2 MiB, and copies and temporaries (a Compare snapshot's engine, a
// model's activations) are not advised at all. glibc sizes and advises every
// big allocation for transparent huge pages when the tunable
// glibc.malloc.hugetlb=1 is set, but it reads tunables only when a process
// starts, and Eigen allocates through plain malloc.

#include <optional>
#include <string>
#include <string_view>

namespace attention_lab {

// What GLIBC_TUNABLES should be for a run with huge pages, given what it is
// now (`tunables`, null when unset), ATTENTION_LAB_HUGE_PAGES (`setting`,
// null when unset; "0" turns it off), the kernel's THP modes as
// /sys/kernel/mm/transparent_hugepage/enabled shows them and glibc's
// version; nullopt when the program should run on as it is: the tunable is
// chosen already, the kernel gives huge pages to every allocation ("always")
// or to none ("never"), or glibc is older than 2.35 (no such tunable).
std::optional<std::string> tunables_for_huge_pages(const char* tunables, const char* setting, std::string_view thp_modes,
                                                   std::string_view glibc_version);

// When tunables_for_huge_pages says so, runs this program again (same
// arguments, same pid) with that GLIBC_TUNABLES; returns otherwise, or if the
// exec fails (the environment put back as it was). Once only (the restarted
// process is marked); not under valgrind (its tools would lose the program),
// in a sanitizer build (their allocator ignores the tunable), in a setuid
// program (glibc drops the tunable) or when started through the dynamic
// loader. Call first in main, before any thread starts.
void restart_with_huge_pages(char** argv);

// Whether this process runs with glibc.malloc.hugetlb=1 (restarted, or set by the user).
bool huge_pages_requested();

// Bytes of this process's memory in transparent huge pages now (AnonHugePages
// of /proc/self/smaps_rollup; 0 where there is no such file).
double huge_page_bytes();

}  // namespace attention_lab
