// The √d_k experiment as training: at d_k = 64 the run without the scaling
// starts saturated and stalls; at d_k = 4 both learn.

#include "attention_lab/sqrt_dk_training.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace attention_lab;

TEST(SqrtDkTraining, WithoutScalingALargeDkStartsSaturatedAndLearnsSlowly) {
  SqrtDkTrainingOptions o;
  o.d_k = 64;
  const SqrtDkTrainingResult r = run_sqrt_dk_training(o);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.scaled.loss.size(), 150u);
  ASSERT_EQ(r.unscaled.loss.size(), 150u);
  EXPECT_EQ(r.scaled.loss.front() > 0.0, true);
  // Same initialisation: the runs differ only by the scaling.
  EXPECT_LT(r.unscaled.entropy.front(), 0.5 * r.scaled.entropy.front()) << "nearly one-hot rows without it";
  EXPECT_LT(r.scaled.loss.back(), 0.5 * r.scaled.loss.front()) << "the scaled run learns";
  EXPECT_GT(r.unscaled.loss.back(), 1.5 * r.scaled.loss.back()) << r.summary;
  EXPECT_NE(r.summary.find("learns more slowly"), std::string::npos) << r.summary;
}

TEST(SqrtDkTraining, ASmallDkLearnsEitherWay) {
  SqrtDkTrainingOptions o;
  o.d_k = 4;
  const SqrtDkTrainingResult r = run_sqrt_dk_training(o);
  ASSERT_EQ(r.error, "");
  EXPECT_GT(r.unscaled.entropy.front(), 0.5 * r.scaled.entropy.front());
  EXPECT_LT(r.scaled.loss.back(), 0.5 * r.scaled.loss.front());
  EXPECT_LT(r.unscaled.loss.back(), 0.5 * r.unscaled.loss.front());
}

TEST(SqrtDkTraining, RefusesOptionsOutOfRangeByName) {
  SqrtDkTrainingOptions o;
  o.d_k = 0;
  EXPECT_EQ(run_sqrt_dk_training(o).error, "d_k: expected 1 to 256, found 0");
  o = {};
  o.learning_rate = -1;
  EXPECT_EQ(validate(o), "learning rate: expected a number above 0 and below 100, found -1");
}
