// TransformerLens hook names wherever a stage id is read.

#include "attention_lab/hook_names.h"
#include "attention_lab/lesson.h"
#include "attention_lab/stage_id.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

using namespace attention_lab;

namespace {

std::string hook_id(std::string_view text) {
  const auto id = parse_stage_id(text);
  return id ? to_string(*id) : "(none)";
}

std::string hook_problem(std::string_view text) {
  const auto read = read_hook_name(text);
  return read ? read->problem : "(not a hook name)";
}

}  // namespace

TEST(HookNames, AttentionHooksAreOurStages) {
  EXPECT_EQ(hook_id("blocks.0.attn.hook_pattern[3]"), "weights[3]");
  EXPECT_EQ(hook_id("blocks.5.attn.hook_pattern[3]"), "L5.weights[3]");
  EXPECT_EQ(hook_id("blocks.0.attn.hook_attn_scores[1]"), "masked[1]");  // theirs are scaled and masked
  EXPECT_EQ(hook_id("blocks.0.attn.hook_q"), "Q_unrotated");             // before RoPE
  EXPECT_EQ(hook_id("blocks.0.attn.hook_q[2]"), "Q_unrotated[2]");
  EXPECT_EQ(hook_id("blocks.0.attn.hook_rot_k[0]"), "K[0]");
  EXPECT_EQ(hook_id("blocks.0.attn.hook_v"), "V");
  EXPECT_EQ(hook_id("blocks.0.attn.hook_z"), "concat");
  EXPECT_EQ(hook_id("blocks.0.attn.hook_z[1]"), "context[1]");
  EXPECT_EQ(hook_id("blocks.2.hook_attn_out"), "L2.output");
  EXPECT_EQ(hook_id("blocks.0.ln1.hook_normalized"), "X");
  // Ours still read as before.
  EXPECT_EQ(hook_id("weights[3]"), "weights[3]");
  EXPECT_EQ(hook_problem("weights[3]"), "(not a hook name)");
}

TEST(HookNames, EveryTableEntryReadsAsTheStageItNames) {
  for (const HookEntry& e : hook_table()) {
    std::string hook = e.hook, ours = e.ours;
    hook.replace(hook.find(".L."), 3, ".0.");
    if (const auto h = hook.find("[h]"); h != std::string::npos) hook.replace(h, 3, "[1]");
    const std::string first = ours.substr(0, ours.find(','));
    std::string expected = first;
    if (const auto h = expected.find("[h]"); h != std::string::npos) expected.replace(h, 3, "[1]");
    EXPECT_EQ(hook_id(hook), expected) << e.hook;
  }
}

TEST(HookNames, WhatIsNotAStageOfTheLayerIsRefusedByName) {
  EXPECT_EQ(hook_id("blocks.0.hook_resid_pre"), "(none)");
  EXPECT_NE(hook_problem("blocks.0.hook_resid_pre").find("blocks.0.hook_resid_pre: a stage of the block around the attention"),
            std::string::npos);
  EXPECT_NE(hook_problem("blocks.0.attn.hook_result").find("the Block view"), std::string::npos);
  EXPECT_NE(hook_problem("hook_embed").find("hook_embed: a hook of the model around its blocks"), std::string::npos);
  EXPECT_NE(hook_problem("ln_final.hook_normalized").find("not of one attention layer"), std::string::npos);
  // Their hooks hold every head; ours one each.
  EXPECT_EQ(hook_problem("blocks.3.attn.hook_pattern"),
            "blocks.3.attn.hook_pattern: TransformerLens holds every head here, our stages one each: add the head, as "
            "blocks.3.attn.hook_pattern[0]");
  EXPECT_NE(hook_problem("blocks.0.hook_attn_out[1]").find("takes no [head]"), std::string::npos);
  EXPECT_NE(hook_problem("blocks.x.attn.hook_q").find("expected blocks.L."), std::string::npos);
  EXPECT_NE(hook_problem("blocks.0.attn.hook_q[a]").find("expected a head"), std::string::npos);
  EXPECT_NE(hook_problem("blocks.0.attn.hook_qq").find("not a TransformerLens hook we know"), std::string::npos);
}

TEST(HookNames, ALessonMayNameStagesByHookAndIsToldWhyNot) {
  const LoadedLesson ok = parse_lesson(R"({"format": "attention-lab/lesson@1", "title": "TL", "preset": "fat-cat",
    "steps": [{"title": "One", "text": "a", "show": ["blocks.0.attn.hook_attn_scores[0]", "blocks.0.attn.hook_pattern[0]"]}]})",
                                       ".");
  ASSERT_TRUE(ok.lesson) << ok.error;
  ASSERT_EQ(ok.lesson->steps[0].show.size(), 2u);
  EXPECT_EQ(to_string(ok.lesson->steps[0].show[1]), "weights[0]");
  const LoadedLesson other_layer = parse_lesson(R"({"format": "attention-lab/lesson@1", "title": "TL", "preset": "fat-cat",
    "steps": [{"title": "One", "text": "a", "show": ["blocks.4.attn.hook_pattern[0]"]}]})",
                                                ".");
  EXPECT_NE(other_layer.error.find("a scenario is one layer (layer 0)"), std::string::npos) << other_layer.error;
  const LoadedLesson resid = parse_lesson(R"({"format": "attention-lab/lesson@1", "title": "TL", "preset": "fat-cat",
    "steps": [{"title": "One", "text": "a", "show": ["blocks.0.hook_resid_post"]}]})",
                                          ".");
  EXPECT_EQ(resid.error.rfind("steps[0].show[0]: blocks.0.hook_resid_post: a stage of the block", 0), 0u) << resid.error;
}

TEST(HookNames, TheDocsTableIsTheTable) {
  std::ifstream file(std::string(ATTENTION_LAB_TEST_DATA_DIR) + "/../docs/formats.md");
  ASSERT_TRUE(file) << "docs/formats.md";
  const std::string docs((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const HookEntry& e : hook_table()) {
    std::string row = "| `" + std::string(e.hook) + "` | ";
    const std::string ours = e.ours;
    for (std::size_t at = 0; at <= ours.size();) {
      const auto comma = ours.find(", ", at);
      row += (at ? ", `" : "`") + ours.substr(at, comma == std::string::npos ? std::string::npos : comma - at) + "`";
      if (comma == std::string::npos) break;
      at = comma + 2;
    }
    row += " | " + std::string(e.note) + " |";
    EXPECT_NE(docs.find(row), std::string::npos) << row;
  }
}
