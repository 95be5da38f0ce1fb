// When the programs restart themselves with glibc's huge-page tunable
// (huge_pages.h): the decision, from the environment, the kernel's THP mode
// and glibc's version. The restart itself is checked on the real binary by
// tests/cli/cli_smoke.sh.

#include "attention_lab/huge_pages.h"

#include <gtest/gtest.h>

using attention_lab::tunables_for_huge_pages;

namespace {
constexpr const char* kMadvise = "always [madvise] never";
}

TEST(HugePages, RestartsWhenTheKernelGivesThemOnRequestOnly) {
  EXPECT_EQ(tunables_for_huge_pages(nullptr, nullptr, kMadvise, "2.36"), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(tunables_for_huge_pages(nullptr, nullptr, "always madvise [never]", "2.36"), std::nullopt);
  EXPECT_EQ(tunables_for_huge_pages(nullptr, nullptr, "[always] madvise never", "2.36"), std::nullopt);
  EXPECT_EQ(tunables_for_huge_pages(nullptr, nullptr, "", "2.36"), std::nullopt);  // no THP in this kernel
}

TEST(HugePages, KeepsTheUsersTunablesAndChoice) {
  EXPECT_EQ(tunables_for_huge_pages("glibc.malloc.arena_max=2", nullptr, kMadvise, "2.36"),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  EXPECT_EQ(tunables_for_huge_pages("", nullptr, kMadvise, "2.36"), "glibc.malloc.hugetlb=1");
  // chosen already, either way (this is also what stops a second restart)
  EXPECT_EQ(tunables_for_huge_pages("glibc.malloc.hugetlb=0", nullptr, kMadvise, "2.36"), std::nullopt);
  EXPECT_EQ(tunables_for_huge_pages("x=1:glibc.malloc.hugetlb=1", nullptr, kMadvise, "2.36"), std::nullopt);
  EXPECT_EQ(tunables_for_huge_pages(nullptr, "0", kMadvise, "2.36"), std::nullopt);
  EXPECT_EQ(tunables_for_huge_pages(nullptr, "1", kMadvise, "2.36"), "glibc.malloc.hugetlb=1");
}

TEST(HugePages, OnlyWithAGlibcThatKnowsTheTunable) {
  EXPECT_EQ(tunables_for_huge_pages(nullptr, nullptr, kMadvise, "2.34"), std::nullopt);
  EXPECT_EQ(tunables_for_huge_pages(nullptr, nullptr, kMadvise, "2.35"), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(tunables_for_huge_pages(nullptr, nullptr, kMadvise, "2.40"), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(tunables_for_huge_pages(nullptr, nullptr, kMadvise, "3.0"), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(tunables_for_huge_pages(nullptr, nullptr, kMadvise, "1.99"), std::nullopt);
  EXPECT_EQ(tunables_for_huge_pages(nullptr, nullptr, kMadvise, "unknown"), std::nullopt);
  EXPECT_EQ(tunables_for_huge_pages(nullptr, nullptr, kMadvise, ""), std::nullopt);
}
