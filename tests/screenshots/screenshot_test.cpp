/// \file
/// Screenshots of weir-studio's main window for review, taken on the real
/// X11 platform (xcb) under a virtual X server (Xvfb, see CMakeLists.txt):
/// the sample model's graph with its docks, a node selected with its
/// properties, the bytes-moved overlay with its legend, and the dark
/// theme. The PNGs go to WEIR_SCREENSHOT_DIR (the build sets
/// build/<preset>/screenshots/); docs/images/ holds the one the README
/// shows. The test checks that each picture is the window's
/// size, is not blank, and that the overlay and the theme change what is
/// drawn — not how it looks, which is for a person to judge.

#include "app/studio/document.h"
#include "app/studio/graph_panel.h"
#include "app/studio/main_window.h"
#include "app/studio/overlay.h"
#include "app/studio/theme.h"
#include "tests/gui/gui_test_helpers.h"
#include "tests/gui/test_environment.h"
#include "workspace/workspace.h"

#include <QApplication>
#include <QDir>
#include <QGuiApplication>
#include <QImage>
#include <QPixmap>
#include <QScreen>
#include <QSet>
#include <QTest>

#include <memory>

using namespace weir;
using namespace weir::studio;
using namespace weir::studio::testing;

namespace {

/// WEIR_SCREENSHOT_DIR (the build sets it), else the working folder.
QString outputFolder() {
  QString dir = qEnvironmentVariable("WEIR_SCREENSHOT_DIR");
  return dir.isEmpty() ? QDir::currentPath() : dir;
}

/// How many different colours the picture uses (sampled on a grid).
int colourCount(const QImage &image) {
  QSet<QRgb> seen;
  for (int y = 0; y < image.height(); y += 3)
    for (int x = 0; x < image.width(); x += 3)
      seen.insert(image.pixel(x, y));
  return seen.size();
}

/// The share of sampled pixels that differ between two pictures.
double differingShare(const QImage &a, const QImage &b) {
  if (a.size() != b.size())
    return 1.0;
  int differ = 0, total = 0;
  for (int y = 0; y < a.height(); y += 3)
    for (int x = 0; x < a.width(); x += 3, ++total)
      differ += a.pixel(x, y) != b.pixel(x, y);
  return total ? static_cast<double>(differ) / total : 0.0;
}

} // namespace

class ScreenshotTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase();
  void cleanupTestCase();
  void platformIsX11();
  void graphWithDocks();
  void selectedNode();
  void bytesMovedOverlay();
  void darkTheme();

private:
  /// Grabs the window from the X server, saves it as NAME.png, and checks
  /// its size and that it is not blank.
  QImage shoot(const QString &name);

  std::unique_ptr<testing::TestEnvironment> env_;
  std::unique_ptr<MainWindow> window_;
  QImage plain_;
};

void ScreenshotTest::initTestCase() {
  env_ = std::make_unique<testing::TestEnvironment>();
  QVERIFY(QDir().mkpath(outputFolder()));
  window_ = std::make_unique<MainWindow>();
  window_->resize(1400, 900);
  window_->show();
  QVERIFY(QTest::qWaitForWindowExposed(window_.get(), kTimeoutMs));
  window_->openFile(WEIR_SAMPLE_MODEL);
  QVERIFY(waitForGraph(*window_));
}

void ScreenshotTest::cleanupTestCase() {
  window_.reset();
  env_.reset();
}

QImage ScreenshotTest::shoot(const QString &name) {
  QTest::qWait(200); // let the last paint reach the X server
  QScreen *screen = window_->screen();
  if (!screen)
    return {};
  QImage image = screen->grabWindow(window_->winId()).toImage();
  QString path = QDir(outputFolder()).filePath(name + ".png");
  bool saved = image.save(path, "PNG");
  qInfo("[ screenshot ] %s (%dx%d, %d colours)", qPrintable(path),
        image.width(), image.height(), colourCount(image));
  if (!saved)
    return {};
  return QImage(path); // what a reviewer will see
}

void ScreenshotTest::platformIsX11() {
  QCOMPARE(QGuiApplication::platformName(), QStringLiteral("xcb"));
}

void ScreenshotTest::graphWithDocks() {
  QTest::qWait(200); // the docks settle their sizes first
  window_->graphPanel()->fit();
  plain_ = shoot("studio-graph");
  QVERIFY(!plain_.isNull());
  QCOMPARE(plain_.size(), window_->size() * window_->devicePixelRatio());
  // Glyphs, text, docks: far more than a blank or single-colour window.
  QVERIFY2(colourCount(plain_) > 50, "the screenshot looks blank");
}

void ScreenshotTest::selectedNode() {
  const ir::Program &p = window_->document()->workspace()->program();
  ir::NodeId conv = 0;
  for (const ir::Node &n : p.states.front().nodes)
    if (n.kind == ir::NodeKind::Library) {
      conv = n.id;
      break;
    }
  QVERIFY(conv != 0);
  window_->graphPanel()->selectNode(conv);
  QImage selected = shoot("studio-selected-node");
  QVERIFY(!selected.isNull());
  QVERIFY2(differingShare(plain_, selected) > 0.001,
           "selecting a node changed nothing on screen");
}

void ScreenshotTest::bytesMovedOverlay() {
  window_->graphPanel()->setOverlay(Overlay::BytesMoved);
  QImage overlay = shoot("studio-overlay-bytes-moved");
  QVERIFY(!overlay.isNull());
  QVERIFY2(differingShare(plain_, overlay) > 0.001,
           "the overlay changed nothing on screen");
  window_->graphPanel()->setOverlay(Overlay::None);
}

void ScreenshotTest::darkTheme() {
  setTheme(Theme::Dark);
  QImage dark = shoot("studio-dark");
  setTheme(Theme::Light);
  QVERIFY(!dark.isNull());
  QVERIFY2(differingShare(plain_, dark) > 0.05,
           "the dark theme changed little on screen");
}

QTEST_MAIN(ScreenshotTest)
#include "screenshot_test.moc"
