// Crash safety of saving: a child process saves to one path over and over,
// alternating between two contents, and is SIGKILLed at varied moments. The
// file at the path must always be one of the two complete versions — never
// missing, truncated or a mix — for writeFileAtomically and for sessions.
// Temporaries a killed write leaves beside it are allowed; they are counted
// and removed.

#include "ir/atomic_file.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "workspace/session.h"
#include "workspace/workspace.h"

#include <gtest/gtest.h>

#include "workspace/temp_dir.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <poll.h>
#include <sstream>
#include <string>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace weir::workspace {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

using workspace_testing::TempDir;

std::string readBytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return "<cannot open>";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Deterministic pseudo-random numbers (a 64-bit LCG), the same on every
/// platform, unlike std::uniform_int_distribution.
class Sequence {
public:
  explicit Sequence(std::uint64_t seed) : x_(seed) {}
  std::uint64_t next(std::uint64_t bound) {
    x_ = x_ * 6364136223846793005ull + 1442695040888963407ull;
    return (x_ >> 33) % bound;
  }

private:
  std::uint64_t x_;
};

std::string payload(std::size_t size, std::uint64_t seed) {
  std::string s(size, '\0');
  std::uint64_t x = seed;
  for (std::size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = char(x >> 24);
  }
  return s;
}

/// What one round of kills found.
struct Tally {
  int kills = 0;
  int sawFirst = 0, sawSecond = 0;
  int leftoverTemporaries = 0;
};

/// Runs `rounds` rounds: fork a child that calls save(k) for k = start,
/// start + 1, ... (reporting each completed save on a pipe), wait until it
/// completed one, sleep a varied 0-20 ms, SIGKILL it, reap it, then have
/// `check` identify the file at `target` (0 or 1, -1 for neither). The
/// directory must hold only `target`, `keep` and temporaries of `target`,
/// which are counted and removed. In the first four rounds the child stops
/// after its first save (and is killed waiting), so both versions are seen
/// whatever the relative speed of the two saves — under a sanitizer on a
/// busy machine the kill otherwise tends to land in the slower one, always
/// leaving the faster one's file; the other rounds kill at varied points
/// inside saves.
void killWhileSaving(int rounds, std::uint64_t seed, const fs::path &target,
                     const std::vector<std::string> &keep,
                     const std::function<void(unsigned)> &save,
                     const std::function<int()> &check, Tally &tally) {
  Sequence delays(seed);
  const std::string tempPrefix = "." + target.filename().string() + ".tmp.";
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const unsigned start = unsigned(round) % 2;
    std::fflush(nullptr);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      // The child: save forever; never return into gtest.
      ::close(fds[0]);
      try {
        for (unsigned k = start;; ++k) {
          save(k % 2);
          char c = char('0' + k % 2);
          if (::write(fds[1], &c, 1) != 1)
            ::_exit(4);
          while (round < 4)
            ::pause();
        }
      } catch (...) {
        ::_exit(3);
      }
      ::_exit(5);
    }
    ::close(fds[1]);
    // Wait for one completed save, so every kill lands after the child has
    // written at least once and during a later save (or between saves).
    pollfd p{fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, 20000);
    std::uint64_t delayUs = delays.next(20001);
    if (ready == 1)
      std::this_thread::sleep_for(std::chrono::microseconds(delayUs));
    ::kill(pid, SIGKILL);
    int status = 0;
    pid_t reaped;
    do
      reaped = ::waitpid(pid, &status, 0);
    while (reaped < 0 && errno == EINTR);
    ASSERT_EQ(reaped, pid);
    char buf[256];
    ssize_t reports = 0, n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0)
      reports += n;
    ::close(fds[0]);
    ASSERT_EQ(ready, 1) << "the child completed no save in 20 s";
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the child stopped by itself (status " << status
        << "): a save threw in the child";
    ASSERT_GE(reports, 1);
    ++tally.kills;

    // Only complete files under their own names.
    for (const auto &e : fs::directory_iterator(target.parent_path())) {
      std::string name = e.path().filename().string();
      if (name == target.filename().string() ||
          std::find(keep.begin(), keep.end(), name) != keep.end())
        continue;
      ASSERT_EQ(name.rfind(tempPrefix, 0), 0u)
          << "unexpected file '" << name << "' beside the target";
      ++tally.leftoverTemporaries;
      fs::remove(e.path());
    }
    ASSERT_TRUE(fs::is_regular_file(target)) << "the target is gone";
    int which = check();
    ASSERT_NE(which, -1) << "after a kill " << delayUs
                         << " us into saving, the file at " << target
                         << " is neither complete version ("
                         << fs::file_size(target) << " bytes)";
    (which == 0 ? tally.sawFirst : tally.sawSecond)++;
  }
}

TEST(CrashSafety, KilledAtomicWritesLeaveOldOrNewFile) {
  TempDir dir;
  const fs::path target = dir / "weights.bin";
  // Two distinct payloads of different sizes: a truncated or mixed file
  // matches neither.
  const std::string versions[2] = {payload(2 * 1024 * 1024 + 3, 1),
                                   payload(5 * 1024 * 1024 - 7, 2)};
  ASSERT_NE(versions[0], versions[1].substr(0, versions[0].size()));
  writeFileAtomically(target, versions[0]); // a complete version first
  ASSERT_EQ(readBytes(target), versions[0]);

  auto begin = Clock::now();
  Tally tally;
  killWhileSaving(
      100, 0x5eed, target, {},
      [&](unsigned k) { writeFileAtomically(target, versions[k]); },
      [&] {
        std::string got = readBytes(target);
        return got == versions[0] ? 0 : got == versions[1] ? 1 : -1;
      },
      tally);
  double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  std::printf("[ crash    ] writeFileAtomically: %d kills in %.1f s; file was "
              "version 1 %d times, version 2 %d times; %d leftover "
              "temporaries\n",
              tally.kills, seconds, tally.sawFirst, tally.sawSecond,
              tally.leftoverTemporaries);
  EXPECT_EQ(tally.kills, 100);
  // Each child starts with the version its round number picks, so both
  // versions show up.
  EXPECT_GT(tally.sawFirst, 0);
  EXPECT_GT(tally.sawSecond, 0);
  std::vector<std::string> names;
  for (const auto &e : fs::directory_iterator(dir.path()))
    names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"weights.bin"});
}

TEST(CrashSafety, KilledSessionSavesLeaveOldOrNewSession) {
  TempDir dir;
  fs::copy_file(std::string(WEIR_SOURCE_DIR) + "/resources/models/cnn.onnx",
                dir / "cnn.onnx");
  // Two different sessions on the same model: all batchnorms folded and
  // expanded, with a snapshot; one batchnorm folded, without.
  auto first = openModel(dir / "cnn.onnx");
  for (int guard = 0; guard < 16; ++guard) {
    auto m = first->matches("fold-batchnorm");
    if (m.empty())
      break;
    first->apply("fold-batchnorm", m.front());
  }
  first->apply("expand-all");
  auto second = openModel(dir / "cnn.onnx");
  second->apply("fold-batchnorm", second->matches("fold-batchnorm").at(0));
  ASSERT_NE(first->hash(), second->hash());
  const Workspace *workspaces[2] = {first.get(), second.get()};
  const SaveOptions options[2] = {{.snapshot = true}, {.snapshot = false}};
  const std::uint64_t hashes[2] = {first->hash(), second->hash()};

  const fs::path target = dir / "work.weir";
  std::string bytes[2];
  for (int v : {1, 0}) { // ends with version 0 complete on disk
    saveSession(*workspaces[v], target, options[v]);
    bytes[v] = readBytes(target);
  }
  ASSERT_NE(bytes[0], bytes[1]);
  ASSERT_EQ(openSession(target)->hash(), hashes[0]);

  auto begin = Clock::now();
  Tally tally;
  killWhileSaving(
      30, 0xc0ffee, target, {"cnn.onnx"},
      [&](unsigned k) { saveSession(*workspaces[k], target, options[k]); },
      [&] {
        std::string got = readBytes(target);
        int which = got == bytes[0] ? 0 : got == bytes[1] ? 1 : -1;
        if (which < 0)
          return -1;
        try {
          auto ws = openSession(target);
          if (ws->hash() != hashes[which]) {
            ADD_FAILURE() << "the session reopened to "
                          << ir::hashHex(ws->hash()) << ", saved as "
                          << ir::hashHex(hashes[which]);
            return -1;
          }
        } catch (const std::exception &e) {
          ADD_FAILURE() << "the session does not reopen: " << e.what();
          return -1;
        }
        return which;
      },
      tally);
  double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  std::printf("[ crash    ] saveSession: %d kills in %.1f s; file was session "
              "1 %d times, session 2 %d times; %d leftover temporaries\n",
              tally.kills, seconds, tally.sawFirst, tally.sawSecond,
              tally.leftoverTemporaries);
  EXPECT_EQ(tally.kills, 30);
  EXPECT_GT(tally.sawFirst, 0);
  EXPECT_GT(tally.sawSecond, 0);
  std::vector<std::string> names;
  for (const auto &e : fs::directory_iterator(dir.path()))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"cnn.onnx", "work.weir"}));
}

} // namespace
} // namespace weir::workspace
