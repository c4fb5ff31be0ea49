#include "onnx/onnx_passes.h"

#include "ir/error.h"
#include "onnx/shape_consistency.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>

// In a sanitized build (asan, fuzz) the runtime's hook for a fatal report;
// absent otherwise.
extern "C" __attribute__((weak)) void
__sanitizer_set_death_callback(void (*callback)(void));

namespace weir::onnx_import {
namespace {

/// What the child sends, each record a tag, a 64-bit length and the bytes.
enum class Tag : char {
  Pass = 'S',        ///< the pass that starts now (named in a crash)
  Note = 'N',        ///< a line for ImportReport::notes
  Unverified = 'U',  ///< a note that also makes the shapes unverified
  Mismatch = 'M',    ///< a declared shape the operators contradict
  DataOmitted = 'D', ///< the model's initializers come without their data
  Model = 'P',       ///< the model the passes made
  Done = 'E',
};

class Sender {
public:
  explicit Sender(int fd) : fd_(fd) {}
  void send(Tag tag, std::string_view bytes = {}) {
    char header[9];
    header[0] = static_cast<char>(tag);
    std::uint64_t n = bytes.size();
    std::memcpy(header + 1, &n, sizeof n);
    write(header, sizeof header);
    write(bytes.data(), bytes.size());
  }

private:
  void write(const char *p, std::size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        _exit(3); // the parent is gone or stopped reading
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  int fd_;
};

/// ONNX's converter, checker and shape inference throw on models they cannot
/// handle; those are notes, not failures, as long as Weir's checks passed.
template <typename F> bool tryOnnx(F &&f, std::string &what) {
  try {
    f();
    return true;
  } catch (const std::exception &e) {
    what = e.what();
    return false;
  }
}

void dropData(onnx::TensorProto &t) {
  t.clear_raw_data();
  t.clear_float_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_double_data();
  t.clear_uint64_data();
  t.clear_string_data();
}

/// The passes, in the child.
void runPasses(onnx::ModelProto &model, const ImportOptions &options,
               int originalOpset, Sender &out) {
  std::string what;
  bool upgraded = false;
  if (options.upgradeOpset && originalOpset > 0 &&
      originalOpset < options.targetOpset) {
    out.send(Tag::Pass, "version converter");
    onnx::ModelProto converted;
    if (tryOnnx(
            [&] {
              converted = onnx::version_conversion::ConvertVersion(
                  model, options.targetOpset);
            },
            what)) {
      model = std::move(converted);
      upgraded = true;
      out.send(Tag::Note, "upgraded from opset " +
                              std::to_string(originalOpset) + " to " +
                              std::to_string(options.targetOpset));
    } else {
      out.send(Tag::Note, "kept opset " + std::to_string(originalOpset) +
                              ": the version converter failed: " + what);
    }
  }
  if (options.runOnnxChecker) {
    out.send(Tag::Pass, "checker");
    if (!tryOnnx([&] { onnx::checker::check_model(model); }, what))
      out.send(Tag::Note, "ONNX checker: " + what);
  }
  out.send(Tag::Pass, "shape inference");
  if (!tryOnnx(
          [&] {
            onnx::ShapeInferenceOptions si(/*check_type=*/false,
                                           /*error_mode=*/0,
                                           /*data_prop=*/true);
            onnx::shape_inference::InferShapes(
                model, onnx::OpSchemaRegistry::Instance(), si);
          },
          what)) {
    // A declaration that contradicts the operators is refused outright;
    // any other stop leaves the shapes unverified: the program can be
    // looked at and transformed, not run (ir::requireRunnable).
    out.send(Tag::Pass, "shape inference without the declared shapes");
    if (std::optional<std::string> mismatch = declaredShapeMismatch(model)) {
      out.send(Tag::Mismatch, *mismatch);
      out.send(Tag::Done);
      return;
    }
    out.send(Tag::Unverified, "shape inference stopped early: " + what);
  }
  // The passes leave the initializers as they were unless the converter
  // ran: the parent keeps its own copy of their data.
  if (!upgraded) {
    for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer())
      dropData(t);
    out.send(Tag::DataOmitted);
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    out.send(Tag::Mismatch, "the upgraded model is too large to serialize "
                            "(over 2 GiB)");
    out.send(Tag::Done);
    return;
  }
  out.send(Tag::Model, bytes);
  out.send(Tag::Done);
}

/// Reads what the child sends into `data` until it closes the pipe.
/// Returns false when the deadline passes first; the child is then killed
/// and reaped.
bool receive(int fd, pid_t child, int seconds, std::string &data) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  char buffer[1 << 16];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    pollfd p{fd, POLLIN, 0};
    int ready = left > 0 ? ::poll(&p, 1, static_cast<int>(left)) : 0;
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0) {
      ::kill(child, SIGKILL);
      ::waitpid(child, nullptr, 0);
      return false;
    }
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return true;
    data.append(buffer, static_cast<std::size_t>(n));
  }
}

} // namespace

void runOnnxPasses(onnx::ModelProto &model, const ImportOptions &options,
                   ImportReport &report) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(std::string("cannot start ONNX's passes: ") +
                std::strerror(errno));
  std::fflush(nullptr); // nothing buffered is written twice
  pid_t child = ::fork();
  if (child < 0) {
    int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("cannot start ONNX's passes: ") + std::strerror(e));
  }
  if (child == 0) {
    // A fault in ONNX's code ends the child at once, without the handlers
    // the parent installed (a sanitizer's report, a fuzzer's record of the
    // input: the crash is contained, and the parent reports it).
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL})
      std::signal(sig, SIG_DFL);
    if (__sanitizer_set_death_callback)
      __sanitizer_set_death_callback(nullptr);
    ::close(fds[0]);
    Sender out(fds[1]);
    try {
      runPasses(model, options, report.originalOpset, out);
    } catch (...) {
      _exit(4);
    }
    _exit(0); // no destructors, no exit handlers: they are the parent's
  }
  ::close(fds[1]);
  std::string data;
  const bool finished = receive(fds[0], child, options.passSeconds, data);
  ::close(fds[0]);
  int status = 0;
  while (finished && ::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }

  std::string pass = "passes", mismatch, modelBytes;
  bool done = false, dataOmitted = false;
  std::size_t at = 0;
  while (at + 9 <= data.size()) {
    Tag tag = static_cast<Tag>(data[at]);
    std::uint64_t n = 0;
    std::memcpy(&n, data.data() + at + 1, sizeof n);
    if (n > data.size() - at - 9)
      break; // cut short by a crash
    std::string bytes = data.substr(at + 9, n);
    at += 9 + n;
    switch (tag) {
    case Tag::Pass:
      pass = bytes;
      break;
    case Tag::Note:
      report.notes.push_back(bytes);
      break;
    case Tag::Unverified:
      report.notes.push_back(bytes);
      report.unverifiedShapes = bytes;
      break;
    case Tag::Mismatch:
      mismatch = bytes;
      break;
    case Tag::DataOmitted:
      dataOmitted = true;
      break;
    case Tag::Model:
      modelBytes = std::move(bytes);
      break;
    case Tag::Done:
      done = true;
      break;
    }
  }
  if (!finished)
    throw Error("ONNX's " + pass + " did not finish in " +
                std::to_string(options.passSeconds) +
                " s; the model was not imported");
  if (WIFSIGNALED(status))
    throw Error("ONNX's " + pass + " crashed on this model (" +
                ::strsignal(WTERMSIG(status)) +
                "); the model is malformed and was not imported");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !done)
    throw Error("ONNX's " + pass + " failed (exit status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                "); the model was not imported");
  if (!mismatch.empty())
    throw Error(mismatch);
  onnx::ModelProto result;
  if (!result.ParseFromString(modelBytes))
    throw Error("the model ONNX's passes returned does not parse");
  if (dataOmitted) {
    auto *mine = model.mutable_graph()->mutable_initializer();
    auto *theirs = result.mutable_graph()->mutable_initializer();
    if (mine->size() != theirs->size())
      throw Error("ONNX's passes changed the model's initializers");
    for (int i = 0; i < mine->size(); ++i) {
      if ((*mine)[i].name() != (*theirs)[i].name())
        throw Error("ONNX's passes changed the model's initializers");
      (*theirs)[i].Swap(&(*mine)[i]);
    }
  }
  model = std::move(result);
}

} // namespace weir::onnx_import
