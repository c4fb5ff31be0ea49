/// \file
/// Progress on a terminal (see progress.h).

#include "app/cli/progress.h"

#include <cstdio>
#include <unistd.h>

namespace weir::cli {

Progress::Progress(std::string what)
    : what_(std::move(what)), enabled_(::isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  if (shown_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

void Progress::update(long done, long total, const char *unit,
                      const std::string &detail) {
  if (!enabled_)
    return;
  auto now = std::chrono::steady_clock::now();
  if (shown_ && done != total && now - last_ < std::chrono::milliseconds(100))
    return;
  last_ = now;
  shown_ = true;
  std::fprintf(stderr, "\r\033[K%s %ld/%ld %s%s%s", what_.c_str(), done, total,
               unit, detail.empty() ? "" : "  ", detail.c_str());
  std::fflush(stderr);
}

} // namespace weir::cli
