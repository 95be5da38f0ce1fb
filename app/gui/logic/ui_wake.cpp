#include "logic/ui_wake.h"

#include <atomic>

namespace attention_lab::gui {

namespace {
std::atomic<UiWake> g_wake{nullptr};
}

void set_ui_wake(UiWake wake) { g_wake = wake; }

void wake_ui() {
  if (const UiWake wake = g_wake.load()) wake();
}

}  // namespace attention_lab::gui
