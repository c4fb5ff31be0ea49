#include "app/studio/code_dock.h"

#include "codegen/c/export.h"
#include "codegen/cpu/compile.h"
#include "codegen/lower/lower.h"
#include "transforms/registry.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <exception>

namespace weir::studio {

namespace {

bool hasOperators(const ir::Program &p) {
  for (const ir::State &s : p.states)
    for (const ir::Node &n : s.nodes)
      if (n.kind == ir::NodeKind::Library)
        return true;
  return false;
}

/// The program code generation sees: `p` itself once fully expanded, else
/// a copy with expand-all applied; `note` says which.
ir::Program generable(const ir::Program &p, QString &note) {
  if (!hasOperators(p))
    return p;
  auto expandAll = transforms::requireTransformation("expand-all");
  std::vector<transforms::Match> matches =
      transforms::findMatches(p, *expandAll);
  note = QObject::tr("The program still holds operators: this is the code "
                     "of the program after expand-all (not applied).");
  return transforms::applyChecked(p, *expandAll, matches.at(0)).program;
}

QPlainTextEdit *codeView() {
  auto *edit = new QPlainTextEdit;
  edit->setReadOnly(true);
  edit->setLineWrapMode(QPlainTextEdit::NoWrap);
  edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  return edit;
}

} // namespace

CodeDock::CodeDock(QWidget *parent)
    : QDockWidget(tr("Code"), parent), tabs_(new QTabWidget),
      cppNote_(new QLabel), cppText_(codeView()), llvmNote_(new QLabel),
      llvmStage_(new QComboBox), compile_(new QPushButton(tr("Compile"))),
      llvmText_(codeView()) {
  setObjectName("code");
  for (QLabel *l : {cppNote_, llvmNote_}) {
    l->setWordWrap(true);
    l->setTextFormat(Qt::PlainText);
  }
  auto *cppPage = new QWidget;
  auto *cppLayout = new QVBoxLayout(cppPage);
  cppLayout->addWidget(cppNote_);
  cppLayout->addWidget(cppText_, 1);
  tabs_->addTab(cppPage, tr("C++"));

  auto *llvmPage = new QWidget;
  auto *llvmLayout = new QVBoxLayout(llvmPage);
  auto *bar = new QHBoxLayout;
  llvmStage_->addItems({tr("as generated"), tr("optimized (-O3)")});
  bar->addWidget(compile_);
  bar->addWidget(llvmStage_);
  bar->addStretch(1);
  llvmLayout->addLayout(bar);
  llvmLayout->addWidget(llvmNote_);
  llvmLayout->addWidget(llvmText_, 1);
  tabs_->addTab(llvmPage, tr("LLVM IR"));
  setWidget(tabs_);

  connect(&cpp_, &QFutureWatcher<Result>::finished, this, &CodeDock::showCpp);
  connect(&llvm_, &QFutureWatcher<Result>::finished, this, &CodeDock::showLLVM);
  connect(compile_, &QPushButton::clicked, this, &CodeDock::generateLLVMIR);
  connect(llvmStage_, &QComboBox::currentIndexChanged, this, [this] {
    llvmText_->setPlainText(llvmStage_->currentIndex() ? llvmResult_.optimized
                                                       : llvmResult_.text);
  });
  // Hidden, it makes nothing; shown again, it catches up.
  connect(this, &QDockWidget::visibilityChanged, this, [this](bool visible) {
    if (visible && cppOf_ != program_)
      generateCpp();
  });
}

void CodeDock::setProgram(std::shared_ptr<const ir::Program> program) {
  program_ = std::move(program);
  llvmNote_->setText(tr("Compile to see the LLVM IR of this version."));
  llvmText_->clear();
  llvmResult_ = {};
  if (isVisible())
    generateCpp();
}

void CodeDock::generateCpp() {
  if (!program_ || cpp_.isRunning())
    return; // showCpp() starts the newest when the running one ends
  std::shared_ptr<const ir::Program> p = program_;
  cpp_.setFuture(QtConcurrent::run([p] {
    Result r{p, {}, {}, {}};
    try {
      ir::Program g = generable(*p, r.note);
      r.text = QString::fromStdString(codegen::exportCpp(codegen::lower(g)));
    } catch (const std::exception &e) {
      r.note = QObject::tr("No C++ for this version: ") +
               QString::fromUtf8(e.what());
    }
    return r;
  }));
}

void CodeDock::showCpp() {
  Result r = cpp_.result();
  if (r.program != program_) {
    generateCpp();
    return;
  }
  cppOf_ = r.program;
  cppNote_->setText(r.note);
  cppNote_->setVisible(!r.note.isEmpty());
  cppText_->setPlainText(r.text);
  emit cppReady();
}

void CodeDock::generateLLVMIR() {
  if (!program_ || llvm_.isRunning())
    return;
  compile_->setEnabled(false);
  llvmNote_->setText(tr("Compiling…"));
  std::shared_ptr<const ir::Program> p = program_;
  llvm_.setFuture(QtConcurrent::run([p] {
    Result r{p, {}, {}, {}};
    try {
      ir::Program g = generable(*p, r.note);
      codegen::CompileOptions options;
      options.keepLLVMIR = true;
      codegen::Executable exe = codegen::compile(g, options);
      r.text = QString::fromStdString(exe.llvmIR());
      r.optimized = QString::fromStdString(exe.optimizedLLVMIR());
      if (exe.compileSeconds() > 0)
        r.note += (r.note.isEmpty() ? "" : " ") +
                  QObject::tr("Compiled in %1 s.")
                      .arg(exe.compileSeconds(), 0, 'f', 2);
    } catch (const std::exception &e) {
      r.note = QObject::tr("No LLVM IR for this version: ") +
               QString::fromUtf8(e.what());
    }
    return r;
  }));
}

void CodeDock::showLLVM() {
  compile_->setEnabled(true);
  Result r = llvm_.result();
  if (r.program != program_) {
    llvmNote_->setText(tr("Compile to see the LLVM IR of this version."));
    return;
  }
  llvmResult_ = r;
  llvmNote_->setText(r.note);
  llvmText_->setPlainText(llvmStage_->currentIndex() ? r.optimized : r.text);
  emit llvmReady();
}

QString CodeDock::cppText() const { return cppText_->toPlainText(); }
QString CodeDock::llvmText() const { return llvmText_->toPlainText(); }

} // namespace weir::studio
