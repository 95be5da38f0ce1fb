#pragma once
// validate LESSON: a lesson's slides are laid out by the desktop app (its
// fonts, its layout), so validate asks the app installed next to this program
// to walk them in presenter mode (attention-lab --check-slides) and reads its
// warnings. It needs no display: the app draws off screen when there is none.

#include <string>
#include <vector>

namespace attention_lab::cli {

struct SlideCheck {
  bool ran = false;                   // false: `note` says why not
  std::string note;                   // why the slides were not checked
  std::vector<std::string> warnings;  // "step 3 ('…'): …", one per problem
  std::string size = "1280x720";      // the projector size checked
};

SlideCheck check_slides(const std::string& lesson_path);

}  // namespace attention_lab::cli
