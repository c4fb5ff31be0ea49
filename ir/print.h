#pragma once
/// \file
/// The readable text form of a program, for people and golden tests. It is
/// deterministic: containers by name, nodes and edges in program order.
///
///     program cnn
///       symbols N
///       input input: f32[1, 3, 32, 32]
///       const conv1.weight: f32[16, 3, 3, 3]  (1728 B)
///       transient t0: f32[1, 16, 32, 32]
///       output logits: f32[1, 10]
///     state main
///       %1 access input
///       %2 library Conv "conv1" {group=1, pads=[1, 1, 1, 1]}
///            in (X: f32, W: f32, B: f32) out (Y: f32)
///       %1 -> %2.X  input[0:1, 0:3, 0:32, 0:32]

#include <string>
#include <string_view>

namespace weir::ir {

class Program;
struct Node;

struct PrintOptions {
  /// Print nested subgraphs (If/Loop bodies) in full instead of a summary.
  bool expandSubgraphs = true;
};

std::string print(const Program &program, const PrintOptions &options = {});

/// How a message names a node, with the id as the text form prints it:
/// "tasklet 'add' (%5)", or with `word` in place of the kind ("map 'relu'
/// (%4)" for a map entry).
std::string describe(const Node &n, std::string_view word = {});

} // namespace weir::ir
