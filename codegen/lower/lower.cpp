/// \file
/// Lowering as a flat list of named steps (lower.h for the semantics; with
/// WEIR_LOG=1 each step prints its time): check that the program can be
/// lowered, find the register containers each map scope allocates per
/// iteration, translate the states (lowerer.h, with the loop kinds from
/// loop_policy.h), declare the buffer parameters, and allocate the
/// transients around the body (zero-filled unless first_touch.h proves
/// them written whole first).

#include "codegen/lower/lower.h"

#include "codegen/lower/first_touch.h"
#include "codegen/lower/lowerer.h"
#include "codegen/lower/step_log.h"
#include "ir/error.h"
#include "ir/scope.h"
#include "ir/validate.h"

#include <set>

namespace weir::codegen {
namespace {

using lowering::RegisterScopes;
using Names = std::set<std::string, std::less<>>;

/// Throws weir::Error naming the first three validation errors, or the
/// first node lowering cannot express.
void checkLowerable(const ir::Program &program) {
  ir::requireRunnable(program);
  for (const ir::State &s : program.states)
    for (const ir::Node &n : s.nodes)
      if (auto why = lowering::unlowerable(n))
        throw Error(*why);
}

/// Register containers are allocated inside their map scope when all their
/// access nodes sit directly in one scope of one state; otherwise for the
/// whole run, like any transient.
RegisterScopes registerScopes(const ir::Program &program) {
  std::map<std::string, std::set<std::pair<std::size_t, ir::NodeId>>,
           std::less<>>
      scopes;
  for (std::size_t k = 0; k < program.states.size(); ++k) {
    const ir::State &s = program.states[k];
    ir::ScopeParents parents = ir::scopeParents(s);
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Access &&
          program.container(n.access().container).storage ==
              ir::Storage::Register)
        scopes[n.access().container].insert({k, parents[n.id]});
  }
  RegisterScopes out;
  for (const auto &[name, where] : scopes)
    if (where.size() == 1 && where.begin()->second != 0)
      out[name] = where.begin()->second;
  return out;
}

/// The function's buffer parameters: inputs, then outputs, then constants,
/// each once.
std::vector<BufferParam> bufferParams(const ir::Program &program,
                                      const Names &written) {
  using Role = BufferParam::Role;
  std::vector<BufferParam> params;
  Names named;
  auto param = [&](const std::string &name, Role role) {
    if (!named.insert(name).second)
      return;
    const ir::Container &c = program.container(name);
    params.push_back({name, c.dtype, c.shape, role, written.count(name) > 0});
  };
  for (const std::string &name : program.inputs)
    param(name, Role::Input);
  for (const std::string &name : program.outputs)
    param(name, Role::Output);
  for (const auto &[name, c] : program.containers)
    if (c.isConstant())
      param(name, Role::Constant);
  return params;
}

/// `body` inside one allocation per transient that is not a parameter, a
/// view or allocated per iteration, zero-filled unless written whole first.
StmtPtr allocateTransients(const ir::Program &program,
                           const RegisterScopes &registers,
                           const std::vector<BufferParam> &params,
                           StmtPtr body) {
  Names args;
  for (const BufferParam &p : params)
    args.insert(p.name);
  auto allocated = [&](const std::string &name, const ir::Container &c) {
    return !args.count(name) && !c.isView() && !registers.count(name);
  };
  std::map<std::string, ir::Expr, std::less<>> sizes;
  for (const auto &[name, c] : program.containers)
    if (allocated(name, c))
      sizes[name] = c.elementCount();
  Names whole = writtenWholeFirst(body, sizes);
  for (auto it = program.containers.rbegin(); it != program.containers.rend();
       ++it)
    if (allocated(it->first, it->second))
      body = allocate(it->first, it->second.dtype, it->second.elementCount(),
                      {body}, !whole.count(it->first));
  return body;
}

} // namespace

LoopFunction lower(const ir::Program &program, const LowerOptions &options) {
  StepLog step("lower " + program.name);
  step("check", [&] { checkLowerable(program); });
  RegisterScopes registers =
      step("register-scopes", [&] { return registerScopes(program); });
  lowering::Lowerer translator(program, options, registers);
  StmtPtr body =
      step("translate", [&] { return block(translator.translateStates()); });
  LoopFunction f;
  f.name = program.name;
  f.symbols = program.symbols;
  f.buffers = step("parameters",
                   [&] { return bufferParams(program, translator.written()); });
  f.body = step("allocate-transients", [&] {
    return allocateTransients(program, registers, f.buffers, body);
  });
  std::size_t statements = statementCount(*f.body);
  if (statements > options.maxStatements)
    throw Error("program '" + program.name + "' lowers to " +
                std::to_string(statements) +
                " loop statements, more than the limit of " +
                std::to_string(options.maxStatements) +
                " that compile in minutes; fuse or tile it first");
  return f;
}

} // namespace weir::codegen
