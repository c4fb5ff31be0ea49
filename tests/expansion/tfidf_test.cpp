// TfIdfVectorizer: counts of the pool's n-grams at every skip distance
// (unigrams once), weighted by mode, placed by ngram_indexes; values worked
// out by hand below. ONNX's node tests (TF mode only) run in the
// conformance suite.

#include "expansion/single_op.h"

namespace weir::expansion_testing {
namespace {

/// Rows [1 2 1 2 3] and [3 1 3 1 2]; the pool: unigrams 1 and 3, bigrams
/// (1, 2) and (3, 1), placed in columns 2, 0, 1 and 3.
///   row 0: 1 twice, 3 once, (1, 2) twice at skip 0, (3, 1) never;
///   row 1: 1 twice, 3 twice, (1, 2) once, (3, 1) twice at skip 0.
/// At skip 1 neither bigram occurs.
runtime::Tensor vectorize(const std::string &mode) {
  Attributes a{{"min_gram_length", std::int64_t(1)},
               {"max_gram_length", std::int64_t(2)},
               {"max_skip_count", std::int64_t(1)},
               {"mode", mode},
               {"ngram_counts", std::vector<std::int64_t>{0, 2}},
               {"ngram_indexes", std::vector<std::int64_t>{2, 0, 1, 3}},
               {"pool_int64s", std::vector<std::int64_t>{1, 3, 1, 2, 3, 1}},
               {"weights", std::vector<double>{0.5, 2, 3, 4}}};
  Program p = single("TfIdfVectorizer", a, {{"X", "x", {2, 5}, DType::I64}},
                     {{"Y", "y", {2, 4}}});
  operators::ExpandAllReport r = operators::expandAll(p);
  EXPECT_TRUE(r.skipped.empty()) << (r.skipped.empty() ? "" : r.skipped[0]);
  expectValid(p);
  runtime::Tensor x(DType::I64, {2, 5});
  const std::int64_t tokens[] = {1, 2, 1, 2, 3, 3, 1, 3, 1, 2};
  for (std::int64_t i = 0; i < 10; ++i)
    x.setFromDouble(i, double(tokens[i]));
  return interp::interpret(p, {{"x", x}}).at("y");
}

TEST(TfIdfExpansion, TermFrequencies) {
  expectNear(vectorize("TF"), {1, 2, 2, 0, 2, 1, 2, 2});
}

TEST(TfIdfExpansion, InverseDocumentFrequencyWeighsWhatOccurs) {
  expectNear(vectorize("IDF"), {2, 3, 0.5, 0, 2, 3, 0.5, 4});
}

TEST(TfIdfExpansion, TfIdfMultiplies) {
  expectNear(vectorize("TFIDF"), {2, 6, 1, 0, 4, 3, 1, 8});
}

TEST(TfIdfExpansion, StringPoolsAreRefusedByName) {
  Program p = single("TfIdfVectorizer",
                     {{"pool_strings", std::vector<std::string>{"a"}},
                      {"ngram_counts", std::vector<std::int64_t>{0}},
                      {"ngram_indexes", std::vector<std::int64_t>{0}}},
                     {{"X", "x", {3}, DType::I64}}, {{"Y", "y", {1}}});
  operators::ExpandAllReport r = operators::expandAll(p);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].find("a pool of strings is not supported"),
            std::string::npos)
      << r.skipped[0];
}

} // namespace
} // namespace weir::expansion_testing
