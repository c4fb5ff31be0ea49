/// \file
/// Compiling pieces concurrently, through the cache (see piece_compiler.h).

#include "codegen/cpu/piece_compiler.h"

#include "codegen/cpu/llvm_emit.h"
#include "codegen/cpu/llvm_host.h"
#include "ir/error.h"

#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace weir::codegen::cpu {
namespace {

constexpr const char *kPieceEntry = "weir_piece";

std::string hex(llvm::ArrayRef<std::uint8_t> bytes, std::size_t digits) {
  static const char *d = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : bytes) {
    s += d[b >> 4];
    s += d[b & 15];
  }
  return s.substr(0, digits);
}

/// The piece's cache key: a hash of its generated IR (as bitcode) and of
/// everything else the code depends on (codeIdentity).
std::string compileKey(const llvm::Module &m) {
  llvm::SmallVector<char, 0> bitcode;
  llvm::raw_svector_ostream os(bitcode);
  llvm::WriteBitcodeToFile(m, os);
  llvm::SHA256 sha;
  sha.update(llvm::StringRef(bitcode.data(), bitcode.size()));
  sha.update(llvm::StringRef("\0", 1));
  sha.update(codeIdentity());
  std::array<std::uint8_t, 32> digest = sha.final();
  return hex(digest, 40);
}

std::string emitObject(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             llvm::CodeGenFileType::ObjectFile))
    throw Error("internal error: LLVM cannot emit object files for " +
                tm.getTargetTriple().str());
  pm.run(m);
  return std::string(object.data(), object.size());
}

/// Which piece compiles each key: the first to claim it. The others take
/// its code once every piece is done.
class KeyOwners {
public:
  /// The piece that compiles `key`: `piece` when it is the first to ask.
  int claim(const std::string &key, int piece) {
    std::lock_guard lock(mutex_);
    return owners_.emplace(key, piece).first->second;
  }

private:
  std::mutex mutex_;
  std::unordered_map<std::string, int> owners_;
};

/// Compiles piece `index` into `out`, unless an equal piece claimed its key
/// first: then returns that piece's index and leaves `out`'s code empty.
int compileOne(const std::vector<Piece> &pieces, int index,
               const PieceCompileOptions &o, KeyOwners &owners,
               CompiledPiece &out) {
  const Piece &piece = pieces[static_cast<std::size_t>(index)];
  // One target machine per compile thread, for every piece it compiles.
  thread_local std::unique_ptr<llvm::TargetMachine> tm = hostMachine();
  llvm::LLVMContext context;
  // Value names (blocks named after the labels of the nodes they come
  // from, arguments after buffers) are for people reading the IR. Without
  // them the key depends on the code only, so the pieces of layers that
  // differ only in their names (DenseNet-121's 3x3 convolutions within a
  // block) compile once.
  context.setDiscardValueNames(!o.keepIR);
  // Optimization remarks and warnings (a loop marked for vectorization
  // that could not be) are not the user's business; errors still throw.
  context.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo *, void *) {});
  std::unique_ptr<llvm::Module> module = emitModule(
      piece.function, kPieceEntry, context, o.profile ? &out.labels : nullptr);
  if (!o.keepIR) {
    module->setModuleIdentifier("weir.piece");
    module->setSourceFileName("weir.piece");
  }
  targetModule(*module, *tm);
  std::string key = compileKey(*module);
  out.symbol = std::string(kPieceEntry) + "_" + key.substr(0, 24);
  if (int owner = owners.claim(key, index); owner != index)
    return owner;
  module->getFunction(kPieceEntry)->setName(out.symbol);
  if (o.keepIR)
    out.llvmIR = printModule(*module);
  if (o.cache) {
    if (std::optional<CachedObject> hit = o.cache->load(key);
        hit && (!o.keepIR || !hit->optimizedIR.empty())) {
      out.object = std::move(hit->object);
      out.optimizedIR = std::move(hit->optimizedIR);
      out.fromCache = true;
      return index;
    }
  }
  optimize(*module, *tm);
  if (o.keepIR)
    out.optimizedIR = printModule(*module);
  out.object = emitObject(*module, *tm);
  if (o.cache)
    o.cache->store(key, {out.object, out.optimizedIR});
  return index;
}

} // namespace

std::vector<CompiledPiece> compilePieces(const std::vector<Piece> &pieces,
                                         const PieceCompileOptions &options) {
  initializeLLVM();
  codeIdentity(); // computed once, before the threads need it
  auto total = static_cast<int>(pieces.size());
  std::vector<CompiledPiece> out(pieces.size());
  std::vector<int> owner(pieces.size());
  KeyOwners owners;
  int threads = options.threads > 0
                    ? options.threads
                    : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::clamp(threads, 1, std::max(1, total));

  std::mutex mutex;
  std::condition_variable changed;
  int next = 0, done = 0, running = threads;
  std::exception_ptr failure;
  auto cancelled = [&] {
    return options.cancel && options.cancel->load(std::memory_order_relaxed);
  };
  auto work = [&] {
    for (;;) {
      int i = 0;
      {
        std::lock_guard lock(mutex);
        if (next == total || failure || cancelled())
          break;
        i = next++;
      }
      try {
        auto k = static_cast<std::size_t>(i);
        owner[k] = compileOne(pieces, i, options, owners, out[k]);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure)
          failure = std::current_exception();
      }
      std::lock_guard lock(mutex);
      ++done;
      changed.notify_all();
    }
    std::lock_guard lock(mutex);
    --running;
    changed.notify_all();
  };
  // Workers compile; the calling thread reports progress as they finish.
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(work);
  {
    std::unique_lock lock(mutex);
    int reported = 0;
    while (running > 0) {
      if (options.progress && reported != done) {
        reported = done;
        lock.unlock();
        try {
          options.progress(reported, total);
        } catch (...) { // stops the workers, then rethrows
          lock.lock();
          if (!failure)
            failure = std::current_exception();
          continue;
        }
        lock.lock();
        continue;
      }
      changed.wait(lock);
    }
  }
  for (std::thread &t : pool)
    t.join();
  if (failure)
    std::rethrow_exception(failure);
  if (cancelled())
    throw Error("compilation cancelled");
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (owner[i] == static_cast<int>(i))
      continue;
    const CompiledPiece &same = out[static_cast<std::size_t>(owner[i])];
    out[i].object = same.object;
    out[i].llvmIR = same.llvmIR;
    out[i].optimizedIR = same.optimizedIR;
    out[i].fromCache = same.fromCache;
    out[i].shared = true;
  }
  if (options.progress)
    options.progress(total, total);
  return out;
}

} // namespace weir::codegen::cpu
