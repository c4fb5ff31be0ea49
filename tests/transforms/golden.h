#pragma once
// Golden before/after text for transformation tests. A golden file holds
//   # before
//   <ir::print of the program before>
//   # after
//   <ir::print after>
// WEIR_UPDATE_GOLDEN=1 rewrites the files instead of comparing.

#include "ir/print.h"
#include "ir/program.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace weir::transforms_testing {

inline std::string goldenPath(const std::string &name) {
  return std::string(WEIR_SOURCE_DIR) + "/tests/transforms/golden/" + name +
         ".txt";
}

inline void expectGolden(const std::string &name, const ir::Program &before,
                         const ir::Program &after) {
  std::string text =
      "# before\n" + ir::print(before) + "# after\n" + ir::print(after);
  std::string path = goldenPath(name);
  const char *update = std::getenv("WEIR_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "no golden file " << path
                  << " (run with WEIR_UPDATE_GOLDEN=1 to create it)";
  std::ostringstream want;
  want << in.rdbuf();
  EXPECT_EQ(text, want.str())
      << "golden " << path
      << " differs (WEIR_UPDATE_GOLDEN=1 rewrites it after review)";
}

} // namespace weir::transforms_testing
