#pragma once
/// \file
/// The reference interpreter: runs a program directly on runtime tensors,
/// slowly but simply, as the independent oracle that generated code is
/// checked against, and step by step for teaching.
///
/// Semantics, beyond the IR's own (docs/DESIGN.md):
/// - The program is validated first; its inputs must be given with their
///   dtypes and shapes. A shape dimension that is a bare symbol binds the
///   symbol to the given extent; InterpretOptions::symbols binds the rest.
/// - Every container is held densely in row-major order (strides are a
///   layout for code generation, not for the oracle). Transients and outputs
///   start zero-filled, constants wrap their data read-only, and inputs are
///   copied so the caller's tensors are never written.
/// - States run in order. Within a state (and within each map body) nodes
///   run in topological order, ties broken by position in `State::nodes`; a
///   nested map scope runs as one node at its entry's place.
/// - A map iterates its ranges in row-major order (the first parameter
///   outermost), each range evaluated with the outer parameters bound.
/// - Data moves through the memlets next to the computation: a tasklet reads
///   each input connector from its memlet's single element and writes each
///   output through every outgoing memlet, combining with the stored value
///   when the memlet has a write-conflict resolution. The memlets on map
///   entries and exits describe those accesses but move nothing themselves.
///   An access-to-access edge copies its subset (see Interpreter::step).
///   An empty memlet between two tasklets hands the value over directly.
/// - Tasklet arithmetic is typed; see core/interp/tasklet_eval.h.
/// - Library nodes must be expanded first. Of the primitives, "gemm" runs
///   (ir/primitives.h), accumulating in double.

#include "core/interp/bind_inputs.h"
#include "core/runtime/tensor.h"
#include "ir/error.h"
#include "ir/limits.h"
#include "ir/program.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace weir::interp {

struct InterpretOptions {
  /// Values of symbols that input shapes do not determine (or that must
  /// agree with them).
  ir::Bindings symbols;
  /// Checked once the symbols are bound, before anything is allocated.
  ir::RunLimits limits;
  /// When set, a run still going at this time stops with
  /// DeadlinePassed, also inside one long map scope (checked every few
  /// thousand iterations): a step of a few loops over a large range can
  /// take minutes, and a caller with a time budget (the fuzz harnesses)
  /// must get control back.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

/// What a run that passed InterpretOptions::deadline throws. The values
/// computed so far are left as they are.
struct DeadlinePassed : weir::Error {
  using Error::Error;
};

/// Executes the program directly, slowly but simply: the independent oracle
/// for code-generation tests. Returns the program's outputs by name. Throws
/// weir::Error for an invalid program, missing, unknown or mismatched inputs,
/// unbound or conflicting symbols, out-of-bounds accesses, integer division
/// by zero and nodes it cannot run.
TensorMap interpret(const ir::Program &program, const TensorMap &inputs,
                    const InterpretOptions &options = {});

/// Step-by-step execution for teaching: each step() runs one top-level node
/// of the current state, a whole map scope counting as one node. An
/// access node's step performs the copies into it from other access nodes;
/// the copy's memlet subset is taken in the container it names and lands at
/// the same indices of the other container when the two have the same
/// shape, or fills the other container in row-major order when that holds
/// exactly the subset's element count.
class Interpreter {
public:
  /// Validates, binds symbols, checks the inputs and allocates every
  /// container; throws weir::Error on the problems interpret() lists.
  Interpreter(const ir::Program &program, TensorMap inputs,
              InterpretOptions options = {});
  ~Interpreter();
  Interpreter(Interpreter &&) noexcept;
  Interpreter &operator=(Interpreter &&) noexcept;

  /// True when every state has run.
  bool done() const;
  /// The top-level node the next step() runs; 0 when done().
  ir::NodeId nextNode() const;
  /// Index into Program::states of the state nextNode() belongs to
  /// (states.size() when done()).
  std::size_t currentState() const;
  /// Runs nextNode(). Throws weir::Error when done() or when the node fails;
  /// after a failure the containers hold whatever the node had written.
  void step();
  /// Steps until done().
  void run();

  /// The current contents of any container (input, constant, transient or
  /// output). The tensor shares the interpreter's storage, so later steps
  /// change what it shows. Throws weir::Error for an unknown name.
  const runtime::Tensor &value(std::string_view container) const;
  /// Independent copies of the program's outputs, by name.
  TensorMap outputs() const;
  /// Every symbol binding: the options' and those inferred from inputs.
  const ir::Bindings &symbols() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace weir::interp
