#pragma once
/// \file
/// Edits the validation tests make to builder programs (ir_builders.h) to
/// break them, and diagnostics printed for failure messages.

#include "ir/error.h"
#include "ir/program.h"
#include "ir/tasklet.h"
#include "ir/validate.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace weir::ir::builders {

/// One diagnostic per line, indented; "(no diagnostics)" when there are none.
inline std::string dump(const std::vector<Diagnostic> &ds) {
  std::string s;
  for (const Diagnostic &d : ds)
    s += "  " + d.str() + "\n";
  return s.empty() ? "  (no diagnostics)\n" : s;
}

/// The edge or node with this id in the first state; throws when none.
inline Edge &edge(Program &p, EdgeId id) {
  for (Edge &e : p.states[0].edges.editable())
    if (e.id == id)
      return e;
  throw weir::Error("no edge " + std::to_string(id));
}

inline Node &node(Program &p, NodeId id) {
  Node *n = p.states[0].findNode(id);
  if (!n)
    throw weir::Error("no node " + std::to_string(id));
  return *n;
}

inline void removeEdge(Program &p, EdgeId id) {
  p.states[0].edges.eraseIf([&](const Edge &e) { return e.id == id; });
}

/// Replaces a tasklet's code (parsed and printed as the importer does).
inline void setTaskletCode(Node &n, const std::string &body) {
  auto code = std::make_shared<const tasklet::Code>(tasklet::parse(body));
  n.payload = TaskletData{tasklet::print(*code), std::move(code)};
}

} // namespace weir::ir::builders
