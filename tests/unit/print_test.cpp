#include "ir/print.h"

#include "ir/json.h"
#include "tests/unit/ir_builders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>

using namespace weir::ir;
using namespace weir::ir::builders;

namespace {

/// The line of `text` that contains `needle` (without its newline).
std::string lineWith(const std::string &text, const std::string &needle) {
  std::size_t at = text.find(needle);
  if (at == std::string::npos)
    return "<no line with '" + needle + "'>";
  std::size_t begin = text.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  std::size_t end = text.find('\n', at);
  return text.substr(begin, end - begin);
}

} // namespace

TEST(Print, ElementwiseAddGolden) {
  EXPECT_EQ(print(elementwiseAdd(16)),
            R"(program elementwise_add
  input A: f32[16]
  input B: f32[16]
  output C: f32[16]
state main
  %1 access A
  %2 access B
  %3 map-entry "add" [i = 0:16] sequential (pair %4)
       in (IN_A: f32, IN_B: f32) out (OUT_A: f32, OUT_B: f32)
  %4 map-exit "add" (pair %3)
       in (IN_C: f32) out (OUT_C: f32)
  %5 tasklet "add" (a: f32, b: f32) -> (c: f32) { c = a + b }
  %6 access C
  %1 -> %3.IN_A  A[0:16]
  %2 -> %3.IN_B  B[0:16]
  %3.OUT_A -> %5.a  A[i]
  %3.OUT_B -> %5.b  B[i]
  %5.c -> %4.IN_C  C[i]
  %4.OUT_C -> %6  C[0:16]
)");
}

TEST(Print, MatmulGoldenWithSymbolsAndWcr) {
  EXPECT_EQ(print(matmulWithWcr(Expr::symbol("M"), 16, 4)),
            R"(program matmul
  symbols M
  input A: f32[M, 4]
  input B: f32[4, 16]
  output C: f32[M, 16]
state main
  %1 access A
  %2 access B
  %3 map-entry "matmul" [i = 0:M, j = 0:16, k = 0:4] cpu-parallel (pair %4)
       in (IN_A: f32, IN_B: f32) out (OUT_A: f32, OUT_B: f32)
  %4 map-exit "matmul" (pair %3)
       in (IN_C: f32) out (OUT_C: f32)
  %5 tasklet "mul" (a: f32, b: f32) -> (c: f32) { c = a * b }
  %6 access C
  %1 -> %3.IN_A  A[0:M, 0:4]
  %2 -> %3.IN_B  B[0:4, 0:16]
  %3.OUT_A -> %5.a  A[i, k]
  %3.OUT_B -> %5.b  B[k, j]
  %5.c -> %4.IN_C  C[i, j] (sum)
  %4.OUT_C -> %6  C[0:M, 0:16] (sum)
)");
}

TEST(Print, Deterministic) {
  for (const Program &p : {elementwiseAdd(16), matmulWithWcr(2, 3, 4),
                           libraryRelu(), nestedMaps(Expr::symbol("N"), 8)}) {
    std::string text = print(p);
    EXPECT_EQ(print(p), text);
    Program copy = p;
    EXPECT_EQ(print(copy), text);
    SerializedProgram s = serialize(p);
    EXPECT_EQ(print(deserialize(s.json, s.binary)), text);
  }
}

TEST(Print, ContainerRoles) {
  Program p = elementwiseAdd(4);
  Container w = argument("W", DType::F32, {Expr(2), Expr(2)});
  w.constant = std::make_shared<const std::vector<std::byte>>(16);
  p.addContainer(w);
  Container t;
  t.name = "T";
  t.shape = {Expr(4), Expr(8)};
  t.strides = {Expr(1), Expr(4)};
  t.storage = Storage::GpuShared;
  p.addContainer(t);
  Container g = argument("G", DType::BF16, {});
  p.addContainer(g);
  std::string text = print(p);
  EXPECT_EQ(lineWith(text, " W:"), "  const W: f32[2, 2]  (16 B)");
  EXPECT_EQ(lineWith(text, " T:"),
            "  transient T: f32[4, 8] strides [1, 4] @gpu-shared");
  EXPECT_EQ(lineWith(text, " G:"), "  global G: bf16[]");
  // Inputs first, then the others by name, then outputs.
  EXPECT_LT(text.find("input B"), text.find("global G"));
  EXPECT_LT(text.find("global G"), text.find("transient T"));
  EXPECT_LT(text.find("const W"), text.find("output C"));
}

TEST(Print, LibraryNodeAndAttributes) {
  Program p = libraryRelu();
  Node &n = *p.states[0].findNode(ReluIds::relu);
  LibraryData &l = n.library();
  l.domain = "com.example";
  l.implementation = "pure";
  l.attributes = {
      {"alpha", 0.1},
      {"axes", std::vector<std::int64_t>{0, -1}},
      {"mode", std::string("constant")},
      {"nan", std::numeric_limits<double>::quiet_NaN()},
      {"t", TensorValue{DType::I64, {2, 3}, nullptr}},
  };
  std::string text = print(p);
  EXPECT_EQ(lineWith(text, "%2 library"),
            "  %2 library com.example.Relu \"relu0\" opset 14 impl=pure "
            "{alpha=0.1, axes=[0, -1], mode=\"constant\", nan=nan, "
            "t=tensor i64[2, 3]}");
  EXPECT_EQ(lineWith(text, "in (X"), "       in (X: f32) out (Y: f32)");
  EXPECT_EQ(lineWith(text, "%1 ->"), "  %1 -> %2.X  X[0:4, 0:8]");
  l.unknown = true;
  EXPECT_NE(lineWith(print(p), "%2 library").find(" UNSUPPORTED {"),
            std::string::npos);
}

TEST(Print, LongListsAreShortened) {
  Program p = libraryRelu();
  std::vector<std::int64_t> many(20, 7);
  p.states[0].findNode(ReluIds::relu)->library().attributes["v"] = many;
  EXPECT_NE(print(p).find("v=[7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, "
                          "... (20 items)]"),
            std::string::npos);
}

TEST(Print, QuotesAndControlCharactersAreEscaped) {
  Program p = libraryRelu();
  Node &n = *p.states[0].findNode(ReluIds::relu);
  n.label = "say \"hi\"\n\\";
  n.library().attributes["s"] = std::string("a\"b\nc\td\x01");
  n.library().attributes["ss"] = std::vector<std::string>{"x\ny"};
  std::string text = print(p);
  EXPECT_EQ(
      lineWith(text, "%2 library"),
      R"(  %2 library Relu "say \"hi\"\n\\" opset 14 {s="a\"b\nc\td\x01", ss=["x\ny"]})");
  // Every node still prints as its own two lines.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 10);
}

TEST(Print, AccessLabelAndMultiStatementTasklet) {
  Program p = elementwiseAdd(4);
  State &s = p.states[0];
  s.findNode(ElementwiseIds::a)->label = "input image";
  Node &t = *s.findNode(ElementwiseIds::tasklet);
  auto code = std::make_shared<const tasklet::Code>(
      tasklet::parse("t = a * b; c = t + a"));
  t.payload = TaskletData{tasklet::print(*code), code};
  std::string text = print(p);
  EXPECT_EQ(lineWith(text, "%1 access"), "  %1 access A \"input image\"");
  EXPECT_EQ(lineWith(text, "%5 tasklet"),
            "  %5 tasklet \"add\" (a: f32, b: f32) -> (c: f32) "
            "{ t = a * b; c = t + a }");
}

TEST(Print, NestedSubgraphs) {
  Program p = libraryRelu();
  Program body = elementwiseAdd(2);
  body.name = "body";
  p.states[0].findNode(ReluIds::relu)->library().attributes["then"] =
      std::make_shared<const Program>(body);
  std::string full = print(p);
  // The subgraph is printed in full, indented under its node.
  EXPECT_NE(full.find("\n      program body\n        input A: f32[2]\n"),
            std::string::npos)
      << full;
  EXPECT_NE(full.find("\n        %4.OUT_C -> %6  C[0:2]\n"), std::string::npos);
  PrintOptions brief;
  brief.expandSubgraphs = false;
  EXPECT_EQ(lineWith(print(p, brief), "%2 library"),
            "  %2 library Relu \"relu0\" opset 14 {then=graph body (6 nodes)}");
  p.states[0].findNode(ReluIds::relu)->library().attributes["then"] =
      std::shared_ptr<const Program>();
  EXPECT_NE(print(p).find("{then=graph <none>}"), std::string::npos);
}

TEST(Print, PrimitiveAndEmptyMemlet) {
  Program p = libraryRelu();
  State &s = p.states[0];
  Node prim;
  prim.id = p.newNodeId();
  prim.kind = NodeKind::Primitive;
  prim.label = "tile";
  prim.inputs = {{"A", DType::F32}};
  prim.payload = PrimitiveData{"brgemm", {{"flops", std::int64_t{128}}}};
  s.nodes.push_back(prim);
  addEdge(p, s, ReluIds::y, "", prim.id, "A", Memlet{});
  std::string text = print(p);
  EXPECT_EQ(lineWith(text, "%4 primitive"),
            "  %4 primitive brgemm \"tile\" {flops=128}");
  EXPECT_EQ(lineWith(text, "%3 -> %4"), "  %3 -> %4.A  ∅");
}
