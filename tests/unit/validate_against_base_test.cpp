// Validating a step's result against the step's input (the two-program
// validate, ir/validation_baseline.h) finds exactly what validating it alone
// finds: each case breaks a clean program the way a faulty step could —
// through the changed node or edge itself, or through something an
// unchanged edge's check reads (a map's range, a container's shape or dtype,
// a connector) — and both forms must report the same diagnostics.

#include "ir/validate.h"

#include "tests/unit/ir_builders.h"
#include "tests/unit/program_edits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

using namespace weir::ir;
using namespace weir::ir::builders;

namespace {

using Ids = ElementwiseIds;

/// Both forms agree on `broken`, made from `base`, and the full form finds
/// `phrase` ("" when the change is valid).
void expectSame(const Program &base, const Program &broken,
                const std::string &phrase) {
  ASSERT_FALSE(hasErrors(validate(base))) << dump(validate(base));
  std::vector<Diagnostic> full = validate(broken);
  std::vector<Diagnostic> against = validate(broken, base);
  EXPECT_EQ(dump(against), dump(full));
  if (phrase.empty()) {
    EXPECT_FALSE(hasErrors(full)) << dump(full);
    return;
  }
  bool found = std::any_of(full.begin(), full.end(), [&](const Diagnostic &d) {
    return d.severity == Severity::Error &&
           d.message.find(phrase) != std::string::npos;
  });
  EXPECT_TRUE(found) << "no error contains '" << phrase << "':\n" << dump(full);
}

struct Case {
  const char *name;
  std::function<void(Program &)> breakIt;
  const char *phrase;
};

} // namespace

TEST(ValidateAgainstBase, AnUnchangedProgramHasNothingToReport) {
  for (const Program &p : {elementwiseAdd(10), matmulWithWcr(8, 16, 4),
                           nestedMaps(4, 8), elementwiseAdd(Expr::symbol("N"))})
    EXPECT_TRUE(validate(p, p).empty()) << p.name;
}

TEST(ValidateAgainstBase, FindsWhatTheFullValidationFinds) {
  const std::vector<Case> cases = {
      {"a changed memlet out of bounds",
       [](Program &p) {
         edge(p, Ids::aIn).memlet.subset = Subset{{Range(0, 11)}};
       },
       "edge 1 subset A[0:11] is out of bounds"},
      {"an unchanged memlet out of bounds through a wider map range",
       [](Program &p) {
         for (NodeId id : {Ids::entry, Ids::exit})
           node(p, id).map().ranges = {Range(0, 11)};
       },
       "edge 3 subset A[i] is out of bounds"},
      {"unchanged memlets out of bounds in a shrunk container",
       [](Program &p) { p.containers.at("A").shape = {Expr(9)}; },
       "edge 1 subset A[0:10] is out of bounds"},
      {"a map parameter bound twice, differently (no longer bounded)",
       [](Program &p) {
         State &s = p.states[0];
         auto [entry, exit] = addMap(p, s, "other", {"i"}, {Range(0, 40)});
         addEdge(p, s, entry, "", exit, "", Memlet{});
       },
       ""},
      {"new tasklet code that does not type-check",
       [](Program &p) { setTaskletCode(node(p, Ids::tasklet), "c = a && b"); },
       "'&&' needs bool operands"},
      {"the tasklet's code kept, a connector's dtype changed",
       [](Program &p) { node(p, Ids::tasklet).inputs[0].dtype = DType::I64; },
       "dtype mismatch on edge 3"},
      {"the tasklet's code kept, a connector renamed",
       [](Program &p) { node(p, Ids::tasklet).inputs[0].name = "x"; },
       "uses undeclared input connector 'a'"},
      {"a map's connector removed under an unchanged edge",
       [](Program &p) { node(p, Ids::entry).outputs.pop_back(); },
       "uses undeclared output connector 'OUT_B'"},
      {"a container's dtype changed under unchanged edges",
       [](Program &p) { p.containers.at("B").dtype = DType::F64; },
       "dtype mismatch on edge 4"},
      {"an unchanged edge whose endpoint changed id",
       [](Program &p) { edge(p, Ids::cOut).dst = Ids::a; }, "has a cycle"},
      {"an edge removed", [](Program &p) { removeEdge(p, Ids::aInner); },
       "input connector 'a' of tasklet 'add' (%5) has no incoming edge"},
      {"the state renamed (nothing to compare with) and broken",
       [](Program &p) {
         p.states[0].name = "renamed";
         setTaskletCode(node(p, Ids::tasklet), "c = a && b");
       },
       "'&&' needs bool operands"},
      {"a node given a second node's id",
       [](Program &p) { node(p, Ids::c).id = Ids::a; },
       "node id 1 is used twice"},
      {"a second edge into an unchanged tasklet's connector",
       [](Program &p) {
         Memlet m = edge(p, Ids::aInner).memlet;
         addEdge(p, p.states[0], Ids::entry, "OUT_A", Ids::tasklet, "a", m);
       },
       "input connector 'a' of tasklet 'add' (%5) has 2 incoming edges"},
      {"a node removed, its edge kept (the other end loses it)",
       [](Program &p) {
         p.states[0].nodes.eraseIf(
             [](const Node &n) { return n.id == Ids::c; });
       },
       "output connector 'OUT_C' of map-exit 'add' (%4) has no outgoing "
       "edge"},
  };
  const Program base = elementwiseAdd(10);
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    Program broken = base;
    c.breakIt(broken);
    expectSame(base, broken, c.phrase);
  }
}

TEST(ValidateAgainstBase, SymbolicShapesAndNestedMaps) {
  // An unchanged inner edge under an outer map whose range grew.
  Program base = nestedMaps(4, 8);
  Program wider = base;
  for (Node &n : wider.states[0].nodes.editable())
    if ((n.kind == NodeKind::MapEntry || n.kind == NodeKind::MapExit) &&
        n.map().params.size() == 1 && n.map().ranges[0].end == Expr(4))
      n.map().ranges = {Range(0, 5)};
  expectSame(base, wider, "is out of bounds");

  Program sym = matmulWithWcr(Expr::symbol("M"), 16, Expr::symbol("K"));
  Program swapped = sym;
  for (Node &n : swapped.states[0].nodes.editable())
    if (n.kind == NodeKind::MapEntry || n.kind == NodeKind::MapExit)
      n.map().ranges[1] = Range(0, 17);
  expectSame(sym, swapped, "is out of bounds");
}
