// What the submission parser's tests share: the one request a body makes,
// and the message of a body it refuses.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "server/job_request.h"

namespace berth::server::submission_test {

// The one request a successful non-array body must produce.
inline store::JobRequest ParseOne(std::string_view body, const SubmissionLimits& limits = {}) {
  Result<Submission> submission = ParseSubmission(body, limits);
  EXPECT_TRUE(submission.ok()) << submission.status().ToString() << "\n  body: " << body;
  if (!submission.ok()) return {};
  EXPECT_EQ(submission->jobs.size(), 1u);
  EXPECT_FALSE(submission->jobs.front().array_max_running.has_value());
  return submission->jobs.front();
}

// The message of a body that must be rejected as InvalidArgument.
inline std::string Rejection(std::string_view body, const SubmissionLimits& limits = {}) {
  Result<Submission> submission = ParseSubmission(body, limits);
  EXPECT_FALSE(submission.ok()) << "accepted: " << body;
  if (submission.ok()) return "";
  EXPECT_EQ(submission.status().code(), StatusCode::kInvalidArgument) << body;
  return submission.status().message();
}

}  // namespace berth::server::submission_test
