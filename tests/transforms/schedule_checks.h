#pragma once
// What the tests of tier 3's scheduling steps (map-interchange,
// map-collapse, parallelize, vectorize) share: one-map programs to
// schedule, schedule counts, and the JIT (compiled so that small maps do
// become parallel loops) checked against the interpreter.

#include "codegen/cpu/compile.h"
#include "ir/mapped_tasklet.h"
#include "ir/print.h"
#include "transforms/golden.h"
#include "transforms/graph_builder.h"
#include "transforms/program_checks.h"
#include "transforms/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace weir::transforms_testing {

using transforms::Match;
using transforms::Params;

inline const transforms::Transformation &byId(const char *id) {
  return *transforms::requireTransformation(id);
}
inline const transforms::Transformation &interchange() {
  return byId("map-interchange");
}
inline const transforms::Transformation &collapse() {
  return byId("map-collapse");
}
inline const transforms::Transformation &parallelize() {
  return byId("parallelize");
}
inline const transforms::Transformation &vectorize() {
  return byId("vectorize");
}

inline ir::Expr sym(const char *s) { return ir::Expr::symbol(s); }

/// One mapped tasklet in a fresh program: inputs and outputs are declared
/// by the caller on `g` first.
struct OneMap {
  GraphBuilder g;
  ir::AccessNodes access;
  ir::MappedTaskletIds ids;
  explicit OneMap(const char *name) : g(name) {}
  ir::MappedTaskletIds
  add(const std::string &label, std::vector<std::string> params,
      std::vector<ir::Range> ranges, std::vector<ir::MappedInput> in,
      std::string_view code, std::vector<ir::MappedOutput> out,
      ir::Schedule schedule = ir::Schedule::Sequential) {
    ids = ir::addMappedTasklet(g.p, g.p.states.back(), label, params, ranges,
                               in, code, out, access, schedule);
    return ids;
  }
};

/// Splits the flat map at `entry` into an outer map over its first `k`
/// parameters holding an inner map over the rest (what a tiling or DaCe's
/// MapExpansion makes): the body's memlets stay, the memlets between the
/// two maps are the outer ones (a superset, as expansions write them).
inline ir::NodeId
splitMap(ir::Program &p, ir::NodeId entry, std::size_t k,
         ir::Schedule innerSchedule = ir::Schedule::Sequential) {
  ir::State &s = p.states.front();
  const ir::Node outer = *s.findNode(entry);
  const ir::MapData m = outer.map();
  const ir::Node outerExit = *s.findNode(m.partner);
  std::vector<std::string> op(m.params.begin(), m.params.begin() + k),
      ip(m.params.begin() + k, m.params.end());
  std::vector<ir::Range> orng(m.ranges.begin(), m.ranges.begin() + k),
      irng(m.ranges.begin() + k, m.ranges.end());
  for (ir::NodeId id : {entry, m.partner}) {
    s.findNode(id)->map().params = op;
    s.findNode(id)->map().ranges = orng;
  }
  auto [ie, ix] =
      ir::addMap(p, s, outer.label + "_inner", ip, irng, innerSchedule);
  s.findNode(ie)->inputs = outer.inputs;
  s.findNode(ie)->outputs = outer.outputs;
  s.findNode(ix)->inputs = outerExit.inputs;
  s.findNode(ix)->outputs = outerExit.outputs;
  std::vector<ir::Edge> in, out;
  for (ir::Edge &e : s.edges.editable()) {
    // Ordering edges into the outer entry or out of the outer exit stay.
    if (e.dst == entry && !e.dstConn.empty())
      in.push_back(e);
    if (e.src == m.partner && !e.srcConn.empty())
      out.push_back(e);
    if (e.src == entry)
      e.src = ie;
    if (e.dst == m.partner)
      e.dst = ix;
  }
  for (const ir::Edge &e : in)
    ir::addEdge(p, s, entry, "OUT_" + e.dstConn.substr(3), ie, e.dstConn,
                e.memlet);
  for (const ir::Edge &e : out)
    ir::addEdge(p, s, ix, e.srcConn, m.partner, "IN_" + e.srcConn.substr(4),
                e.memlet);
  if (in.empty())
    ir::addEdge(p, s, entry, "", ie, "", ir::Memlet{});
  if (out.empty())
    ir::addEdge(p, s, ix, "", m.partner, "", ir::Memlet{});
  return ie;
}

/// Sets every map's schedule (entries and exits).
inline void setSchedules(ir::Program &p, ir::Schedule schedule) {
  for (ir::State &s : p.states)
    for (ir::Node &n : s.nodes.editable())
      if (n.kind == ir::NodeKind::MapEntry || n.kind == ir::NodeKind::MapExit)
        n.map().schedule = schedule;
}

inline int countSchedule(const ir::Program &p, ir::Schedule schedule) {
  int count = 0;
  for (const ir::State &s : p.states)
    for (const ir::Node &n : s.nodes)
      count += n.kind == ir::NodeKind::MapEntry && n.map().schedule == schedule;
  return count;
}

inline int occurrences(const std::string &text, const std::string &what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

/// Compiled so that every map, however small, may become a parallel loop,
/// on two threads.
inline codegen::CompileOptions eagerParallel() {
  codegen::CompileOptions o;
  o.lower.minParallelIterations = 1;
  o.threads = 2;
  o.useCache = false;
  return o;
}

/// The JIT compiled with eagerParallel() gives the interpreter's outputs
/// bit for bit.
inline void expectJitMatchesInterpreter(const ir::Program &p,
                                        std::uint64_t seed = 5) {
  interp::TensorMap in = runtime::randomInputs(p, seed, {{"N", 2}});
  interp::TensorMap want = interp::interpret(p, in);
  interp::TensorMap got = codegen::compile(p, eagerParallel()).run(in);
  for (const auto &[name, t] : want) {
    ASSERT_EQ(t.byteSize(), got.at(name).byteSize()) << name;
    EXPECT_EQ(std::memcmp(t.data(), got.at(name).data(), t.byteSize()), 0)
        << name;
  }
}

inline Match mapMatch(ir::NodeId entry) {
  return Match{"main", {{"map", entry}}};
}

/// Applies `t` once at every listed match that still passes its check
/// (ids survive every helper but map-collapse); returns how many applied.
inline int applyEach(ir::Program &p, const transforms::Transformation &t,
                     const std::vector<Match> &matches,
                     const Params &params = {}) {
  int applied = 0;
  for (const Match &m : matches)
    if (transforms::checkMatch(p, t, m, params)) {
      p = transforms::applyChecked(p, t, m, params).program;
      ++applied;
    }
  return applied;
}

inline std::string reasonAt(const ir::Program &p,
                            const transforms::Transformation &t, const Match &m,
                            const Params &params = {}) {
  transforms::CheckResult c = transforms::checkMatch(p, t, m, params);
  EXPECT_FALSE(c.ok) << t.id() << " at " << m.str() << " should be refused";
  return c.reason;
}

// y[i, j] = x[j, i] + 1 over [i = 0:4, j = 0:6]: a transpose.
inline OneMap transposeMap(ir::Schedule schedule = ir::Schedule::Sequential) {
  OneMap m("transpose");
  m.g.input("x", {6, 4}).output("y", {4, 6});
  m.add("tr", {"i", "j"}, {{0, 4}, {0, 6}}, {{"x", "x", {sym("j"), sym("i")}}},
        "y = x + 1.0", {{"y", "y", {sym("i"), sym("j")}}}, schedule);
  return m;
}

// y[i] += x[i, j, k] over [i = 0:3, j = 0:4, k = 0:5].
inline OneMap sumMap() {
  OneMap m("sum");
  m.g.input("x", {3, 4, 5}).output("y", {3});
  m.add("sum", {"i", "j", "k"}, {{0, 3}, {0, 4}, {0, 5}},
        {{"x", "x", {sym("i"), sym("j"), sym("k")}}}, "y = x",
        {{"y", "y", {sym("i")}, ir::Wcr::Sum}});
  return m;
}

// y[i, j] = x[i, j] * 2 + b[j] over [i = 0:8, j = 0:16].
inline OneMap biasMap(ir::Schedule schedule = ir::Schedule::Sequential) {
  OneMap m("bias");
  m.g.input("x", {8, 16}).input("b", {16}).output("y", {8, 16});
  m.add("bias", {"i", "j"}, {{0, 8}, {0, 16}},
        {{"x", "x", {sym("i"), sym("j")}}, {"b", "b", {sym("j")}}},
        "y = x * 2.0 + b", {{"y", "y", {sym("i"), sym("j")}}}, schedule);
  return m;
}

} // namespace weir::transforms_testing
