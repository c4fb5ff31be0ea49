/// \file
/// compile() and Executable: lowering, the JIT, the compile cache and runs.

#include "codegen/cpu/compile.h"

#include "codegen/cpu/jit.h"
#include "codegen/cpu/object_cache.h"
#include "codegen/cpu/openblas.h"
#include "codegen/cpu/pieces.h"
#include "codegen/cpu/strided_copy.h"
#include "core/interp/bind_inputs.h"
#include "core/runtime/thread_pool.h"
#include "ir/error.h"
#include "ir/hash.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <mutex>

namespace weir::codegen {
namespace {

/// What a compilation produces; shared by every Executable of structurally
/// equal programs compiled with equal options.
struct Compiled {
  LoopFunction function;
  std::string loopIR;
  cpu::PiecePlan plan;
  std::unique_ptr<cpu::JitModule> module;
  /// Profiled regions of every piece in order; piece i's start at
  /// labelOffsets[i].
  std::vector<std::string> labels;
  std::vector<std::size_t> labelOffsets;
  /// Driver copy k's profiled region (when profiling): labels[copyLabels[k]].
  std::vector<std::size_t> copyLabels;
  std::string llvmIR, optimizedIR;
  int cachedPieces = 0, sharedPieces = 0;
  bool callsSgemm = false;
};

/// Each piece's IR after a line naming it.
std::string joinIR(const std::vector<cpu::CompiledPiece> &pieces,
                   std::string cpu::CompiledPiece::*text) {
  std::string all;
  for (std::size_t i = 0; i < pieces.size(); ++i)
    all += "; ---- piece " + std::to_string(i) + " (" + pieces[i].symbol +
           ")\n" + pieces[i].*text;
  return all;
}

/// The most recently compiled programs, by structural hash and options.
class CompileCache {
public:
  std::shared_ptr<const Compiled> find(const std::string &key) {
    std::lock_guard lock(mutex_);
    for (const auto &[k, v] : entries_)
      if (k == key)
        return v;
    return nullptr;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }
  void add(const std::string &key, std::shared_ptr<const Compiled> c) {
    std::lock_guard lock(mutex_);
    entries_.emplace_back(key, std::move(c));
    if (entries_.size() > kCapacity)
      entries_.pop_front();
  }

private:
  static constexpr std::size_t kCapacity = 16;
  std::mutex mutex_;
  std::deque<std::pair<std::string, std::shared_ptr<const Compiled>>> entries_;
};

CompileCache &cache() {
  static CompileCache c;
  return c;
}

bool callsSgemm(const Stmt &s) {
  if (s.kind == StmtKind::Call && s.callee == kCallSgemm)
    return true;
  for (const StmtPtr &b : s.body)
    if (callsSgemm(*b))
      return true;
  return false;
}

std::string cacheKey(const ir::Program &p, const CompileOptions &o) {
  return ir::hashHex(ir::structuralHash(p)) +
         (o.lower.parallelizeSequentialMaps ? "/par" : "/seq") + "/min" +
         std::to_string(o.lower.minParallelIterations) +
         (o.profile ? "/profile" : "") + (o.keepLLVMIR ? "/ir" : "") +
         (o.lower.checkAllAccesses ? "/checked" : "");
}

std::shared_ptr<Compiled> compileFresh(const ir::Program &program,
                                       const CompileOptions &options,
                                       cpu::GemmEngine gemm) {
  auto c = std::make_shared<Compiled>();
  c->function = lower(program, options.lower);
  c->callsSgemm = callsSgemm(*c->function.body);
  if (c->callsSgemm && gemm == cpu::GemmEngine::OpenBlas)
    cpu::openBlas(); // loads it now: a failure is an error here, not later
  c->loopIR = print(c->function);
  c->plan = cpu::cutIntoPieces(c->function);
  cpu::ObjectCache disk = options.useCache ? cpu::ObjectCache::fromEnvironment()
                                           : cpu::ObjectCache({}, 0);
  cpu::PieceCompileOptions po;
  po.profile = options.profile;
  po.keepIR = options.keepLLVMIR;
  po.threads = options.compileThreads;
  po.cache = &disk;
  po.progress = options.progress;
  po.cancel = options.cancel;
  std::vector<cpu::CompiledPiece> pieces =
      cpu::compilePieces(c->plan.pieces, po);
  disk.trimIfDue();
  c->module = std::make_unique<cpu::JitModule>(pieces);
  for (const cpu::CompiledPiece &p : pieces) {
    c->labelOffsets.push_back(c->labels.size());
    c->labels.insert(c->labels.end(), p.labels.begin(), p.labels.end());
    c->cachedPieces += p.fromCache ? 1 : 0;
    c->sharedPieces += p.shared ? 1 : 0;
  }
  if (options.profile)
    for (const cpu::DriverCopy &copy : c->plan.copies) {
      c->copyLabels.push_back(c->labels.size());
      c->labels.push_back(copy.label.empty() ? "(unnamed loop)" : copy.label);
    }
  if (options.keepLLVMIR) {
    c->llvmIR = joinIR(pieces, &cpu::CompiledPiece::llvmIR);
    c->optimizedIR = joinIR(pieces, &cpu::CompiledPiece::optimizedIR);
  }
  return c;
}

/// A driver copy, its sizes evaluated under the run's symbols.
void runCopy(const cpu::DriverCopy &copy, const std::vector<void *> &table,
             const ir::Bindings &symbols) {
  const cpu::CopyNest &n = copy.nest;
  std::array<std::int64_t, 3 * cpu::kMaxCopyRank> dims{};
  for (std::size_t k = 0; k < n.dims.size(); ++k) {
    dims[3 * k] = n.dims[k].extent.evaluate(symbols);
    dims[3 * k + 1] = n.dims[k].dstStride.evaluate(symbols);
    dims[3 * k + 2] = n.dims[k].srcStride.evaluate(symbols);
  }
  auto bytes = static_cast<std::int64_t>(ir::dtypeSize(n.dtype));
  auto *dst = static_cast<std::byte *>(
      table[static_cast<std::size_t>(copy.dstSlot)]);
  const auto *src = static_cast<const std::byte *>(
      table[static_cast<std::size_t>(copy.srcSlot)]);
  cpu::stridedCopy(dst + n.dstOffset.evaluate(symbols) * bytes,
                   src + n.srcOffset.evaluate(symbols) * bytes, bytes,
                   static_cast<std::int64_t>(n.dims.size()), dims.data());
}

/// Runs the driver program: allocates and frees the top-level transients,
/// calls the pieces between, each with its own buffers, and runs the copies
/// that need no code.
void runPlan(const Compiled &c, const std::vector<void *> &buffers,
             const std::vector<std::int64_t> &symbolValues,
             const ir::Bindings &symbols, std::vector<double> &seconds,
             cpu::RunContext &rt) {
  const cpu::PiecePlan &plan = c.plan;
  std::vector<void *> table(static_cast<std::size_t>(plan.slotCount), nullptr);
  std::vector<std::int64_t> bytes(table.size(), 0);
  std::copy(buffers.begin(), buffers.end(), table.begin());
  std::vector<void *> args;
  // An overflow evaluating a size: free what is held, then report it.
  auto releaseHeld = [&] {
    for (std::size_t i = buffers.size(); i < table.size(); ++i)
      if (table[i])
        cpu::releaseTransient(&rt, table[i], bytes[i]);
  };
  std::size_t at = 0;
  while (at < plan.steps.size()) {
    const cpu::DriverStep &s = plan.steps[at];
    auto slot = static_cast<std::size_t>(s.slot);
    switch (s.kind) {
    case cpu::DriverStep::Kind::Allocate:
      try {
        bytes[slot] = s.size.evaluate(symbols) *
                      static_cast<std::int64_t>(ir::dtypeSize(s.dtype));
      } catch (...) {
        releaseHeld();
        throw;
      }
      table[slot] = cpu::allocateTransient(&rt, bytes[slot], s.zeroFill);
      if (!table[slot]) { // out of memory: the error is set; skip the body
        at = static_cast<std::size_t>(s.skipTo);
        continue;
      }
      break;
    case cpu::DriverStep::Kind::Free:
      cpu::releaseTransient(&rt, table[slot], bytes[slot]);
      table[slot] = nullptr;
      break;
    case cpu::DriverStep::Kind::Call: {
      auto p = static_cast<std::size_t>(s.piece);
      args.clear();
      for (int from : plan.pieces[p].slots)
        args.push_back(table[static_cast<std::size_t>(from)]);
      rt.profile = seconds.data() + c.labelOffsets[p];
      c.module->entry(p)(args.data(), symbolValues.data(), &rt);
      break;
    }
    case cpu::DriverStep::Kind::Copy: {
      auto k = static_cast<std::size_t>(s.copy);
      auto start = std::chrono::steady_clock::now();
      try {
        runCopy(plan.copies[k], table, symbols);
      } catch (...) {
        releaseHeld();
        throw;
      }
      if (!c.copyLabels.empty())
        seconds[c.copyLabels[k]] += std::chrono::duration<double>(
                                        std::chrono::steady_clock::now() -
                                        start)
                                        .count();
      break;
    }
    }
    ++at;
  }
}

} // namespace

struct Executable::Impl {
  ir::Program program;
  std::shared_ptr<const Compiled> compiled;
  std::shared_ptr<runtime::ThreadPool> pool;
  /// Transients kept between runs (mutable: a cache, not state).
  mutable cpu::BlockCache blocks;
  double seconds = 0;
  cpu::GemmEngine gemm = cpu::GemmEngine::OpenBlas;
};

void forgetCompilations() { cache().clear(); }

Executable compile(const ir::Program &program, const CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  ir::checkRunLimits(program, {}, options.limits);
  auto impl = std::make_shared<Executable::Impl>();
  impl->program = program;
  std::string key = cacheKey(program, options);
  if (options.useCache)
    impl->compiled = cache().find(key);
  impl->gemm = options.gemm;
  if (impl->gemm == cpu::GemmEngine::Auto)
    impl->gemm = cpu::GemmEngine::OpenBlas; // see GemmEngine
  if (impl->gemm == cpu::GemmEngine::Weir && !cpu::sgemmKernelAvailable())
    throw Error("the Weir gemm engine needs AVX-512F, which this CPU lacks; "
                "use the openblas engine");
  if (!impl->compiled) {
    std::shared_ptr<Compiled> c = compileFresh(program, options, impl->gemm);
    impl->compiled = c;
    if (options.useCache)
      cache().add(key, c);
    impl->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  }
  impl->pool = std::make_shared<runtime::ThreadPool>(options.threads);
  Executable e;
  e.impl_ = std::move(impl);
  return e;
}

interp::TensorMap Executable::run(const interp::TensorMap &inputs,
                                  const RunOptions &options) const {
  const Impl &im = *impl_;
  const ir::Program &p = im.program;
  const LoopFunction &f = im.compiled->function;
  ir::Bindings symbols = interp::bindInputs(p, inputs, options.symbols);
  ir::checkRunLimits(p, symbols, options.limits);
  auto isOutput = [&](const std::string &name) {
    return std::find(p.outputs.begin(), p.outputs.end(), name) !=
           p.outputs.end();
  };

  interp::TensorMap outputs;
  std::vector<runtime::Tensor> keep; // inputs, alive for the call
  std::vector<void *> buffers;
  for (const BufferParam &b : f.buffers) {
    switch (b.role) {
    case BufferParam::Role::Input: {
      runtime::Tensor t = inputs.find(b.name)->second;
      // The caller's tensors never change: an input the program writes, or
      // returns as an output, is copied first.
      if (b.written || isOutput(b.name))
        t = t.clone();
      if (isOutput(b.name))
        outputs.emplace(b.name, t);
      buffers.push_back(const_cast<std::byte *>(t.data()));
      keep.push_back(std::move(t));
      break;
    }
    case BufferParam::Role::Output: {
      runtime::Tensor t(b.dtype,
                        interp::containerShape(p.container(b.name), symbols));
      buffers.push_back(t.mutableData());
      outputs.emplace(b.name, std::move(t));
      break;
    }
    case BufferParam::Role::Constant: {
      const ir::Container &c = p.container(b.name);
      std::int64_t want = 1;
      for (std::int64_t d : interp::containerShape(c, symbols))
        want *= d;
      if (c.constant->size() !=
          static_cast<std::size_t>(want) * ir::dtypeSize(c.dtype))
        throw Error("constant container '" + b.name + "' holds " +
                    std::to_string(c.constant->size()) +
                    " bytes, which does not match its shape");
      // Never written: lowering refuses stores into constants.
      buffers.push_back(const_cast<std::byte *>(c.constant->data()));
      break;
    }
    }
  }
  std::vector<std::int64_t> values;
  for (const std::string &s : f.symbols) {
    auto it = symbols.find(s);
    if (it == symbols.end())
      throw Error("symbol '" + s + "' of program '" + p.name +
                  "' is not bound: no input shape determines it; give it "
                  "with the symbols option");
    values.push_back(it->second);
  }

  const Compiled &c = *im.compiled;
  std::vector<double> seconds(c.labels.size(), 0.0);
  cpu::RunContext rt;
  rt.pool = im.pool.get();
  rt.blocks = &im.blocks;
  rt.weirGemm = im.gemm == cpu::GemmEngine::Weir;
  if (!rt.weirGemm && c.callsSgemm)
    cpu::openBlas(); // a cached compilation made for the other engine
  runPlan(c, buffers, values, symbols, seconds, rt);
  if (options.profile) {
    options.profile->clear();
    for (std::size_t i = 0; i < c.labels.size(); ++i)
      options.profile->push_back({c.labels[i], seconds[i]});
  }
  if (rt.error == cpu::kErrorIntegerDivisionByZero)
    throw Error("program '" + p.name + "' divided an integer by zero");
  if (rt.error == cpu::kErrorOutOfBounds)
    throw Error("program '" + p.name + "': " + rt.failure);
  if (rt.error == cpu::kErrorOutOfMemory)
    throw Error("program '" + p.name +
                "' ran out of memory allocating its transients");
  if (rt.error != 0)
    throw Error("program '" + p.name + "' failed with error code " +
                std::to_string(rt.error));
  return outputs;
}

const std::string &Executable::loopIR() const {
  return impl_->compiled->loopIR;
}
const std::string &Executable::llvmIR() const {
  return impl_->compiled->llvmIR;
}
const std::string &Executable::optimizedLLVMIR() const {
  return impl_->compiled->optimizedIR;
}
int Executable::pieceCount() const {
  return static_cast<int>(impl_->compiled->plan.pieces.size());
}
int Executable::cachedPieceCount() const {
  return impl_->compiled->cachedPieces;
}
int Executable::sharedPieceCount() const {
  return impl_->compiled->sharedPieces;
}
double Executable::compileSeconds() const { return impl_->seconds; }
int Executable::threads() const { return impl_->pool->threads(); }
cpu::GemmEngine Executable::gemmEngine() const { return impl_->gemm; }

} // namespace weir::codegen
