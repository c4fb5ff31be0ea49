#include "onnx/onnx_passes.h"

#include "ir/error.h"
#include "onnx/passes/protocol.h"

#include <onnx/onnx_pb.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace weir::onnx_import {
namespace {

using passes::Tag;

/// Where the helper is: `WEIR_ONNX_PASSES` when set; beside the library (or
/// program) that holds this code, as installed; in the build tree.
std::string helperPath() {
  if (const char *path = std::getenv("WEIR_ONNX_PASSES"))
    return path;
  std::vector<std::string> candidates;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void *>(&runOnnxPasses), &info) &&
      info.dli_fname != nullptr) {
    std::string self = info.dli_fname;
    std::string dir = self.substr(0, self.find_last_of('/') + 1);
    candidates.push_back(dir + WEIR_LIB_TO_ONNX_PASSES);
  }
  candidates.push_back(WEIR_ONNX_PASSES_BUILD_PATH);
  candidates.push_back(WEIR_ONNX_PASSES_INSTALL_PATH);
  for (const std::string &c : candidates)
    if (::access(c.c_str(), X_OK) == 0)
      return c;
  std::string looked;
  for (const std::string &c : candidates)
    looked += (looked.empty() ? "" : ", ") + c;
  throw Error("cannot run ONNX's passes: weir-onnx-passes is not installed "
              "(looked for " +
              looked + "; WEIR_ONNX_PASSES names it)");
}

/// The serialized model in an anonymous file, at offset 0: the helper's
/// standard input.
int modelFile(const onnx::ModelProto &model) {
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    throw Error("the model is too large for ONNX's passes (over 2 GiB)");
  int fd = ::memfd_create("weir-onnx-model", MFD_CLOEXEC);
  if (fd < 0)
    throw Error(std::string("cannot start ONNX's passes: ") +
                std::strerror(errno));
  if (!passes::writeAll(fd, bytes.data(), bytes.size())) {
    int e = errno;
    ::close(fd);
    throw Error(std::string("cannot start ONNX's passes: ") +
                std::strerror(e));
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

/// Starts the helper with `input` as its standard input and `output` as its
/// standard output. posix_spawn, not fork: the importer runs in threaded
/// processes (the GUI's workers, Python), where a forked child may wait
/// forever on a lock another thread held.
pid_t spawnHelper(const ImportOptions &options, int originalOpset, int input,
                  int output) {
  std::string path = helperPath();
  std::vector<std::string> args = {path, passes::kOriginalOpset,
                                   std::to_string(originalOpset),
                                   passes::kTargetOpset,
                                   std::to_string(options.targetOpset)};
  if (options.upgradeOpset)
    args.emplace_back(passes::kUpgrade);
  if (options.runOnnxChecker)
    args.emplace_back(passes::kCheck);
  if (options.foldConstants)
    args.emplace_back(passes::kFoldConstants);
  if (!options.specializeShapes)
    args.emplace_back(passes::kNoSpecialization);
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_adddup2(&files, input, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&files, output, STDOUT_FILENO);
  // Default signal handling and none blocked, whatever the caller set.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t child = 0;
  int e = ::posix_spawn(&child, path.c_str(), &files, &attr, argv.data(),
                        environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&files);
  if (e != 0)
    throw Error("cannot start ONNX's passes (" + path +
                "): " + std::strerror(e));
  return child;
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
  int input = modelFile(model);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(input);
    throw Error(std::string("cannot start ONNX's passes: ") + std::strerror(e));
  }
  pid_t child = 0;
  try {
    child = spawnHelper(options, report.originalOpset, input, fds[1]);
  } catch (...) {
    ::close(input);
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(input);
  ::close(fds[1]);
  std::string data;
  const bool finished = receive(fds[0], child, options.passSeconds, data);
  ::close(fds[0]);
  int status = 0;
  while (finished && ::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }

  std::string pass = "passes", mismatch, modelBytes, omitted;
  bool done = false, dataOmitted = false;
  std::size_t at = 0;
  while (at + passes::kHeaderBytes <= data.size()) {
    Tag tag = static_cast<Tag>(data[at]);
    std::uint64_t n = 0;
    std::memcpy(&n, data.data() + at + 1, sizeof n);
    if (n > data.size() - at - passes::kHeaderBytes)
      break; // cut short by a crash
    std::string bytes = data.substr(at + passes::kHeaderBytes, n);
    at += passes::kHeaderBytes + n;
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
      omitted = bytes;
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
    // The model's own initializers come back first and without their
    // data; shape specialization's constants follow, with theirs.
    if (omitted != std::to_string(mine->size()) ||
        theirs->size() < mine->size())
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
