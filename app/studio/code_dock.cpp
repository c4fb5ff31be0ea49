#include "app/studio/code_dock.h"

#include "codegen/c/export.h"
#include "codegen/cpu/compile.h"
#include "codegen/lower/lower.h"
#include "transforms/registry.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QTextBlock>
#include <QTextDocument>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <exception>
#include <map>
#include <set>

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

/// The label a region names its node by: an epilogue loop is its gemm's.
QString baseLabel(const QString &label) {
  static const QString kEpilogue = " epilogue";
  return label.endsWith(kEpilogue) ? label.chopped(kEpilogue.size()) : label;
}

/// Which node of `p` a label names: labels need not be unique (a map's
/// entry and exit share one), so the node that the code stands for wins —
/// a map entry, then a primitive, an operator, a tasklet.
void resolveRegions(const ir::Program &p,
                    std::vector<CodeDock::Region> &regions) {
  auto rank = [](ir::NodeKind k) {
    switch (k) {
    case ir::NodeKind::MapEntry:
      return 0;
    case ir::NodeKind::Primitive:
      return 1;
    case ir::NodeKind::Library:
      return 2;
    case ir::NodeKind::Tasklet:
      return 3;
    default:
      return 4;
    }
  };
  std::map<QString, std::pair<int, ir::NodeId>> byLabel;
  for (const ir::State &s : p.states)
    for (const ir::Node &n : s.nodes) {
      QString label = QString::fromStdString(n.label);
      auto it = byLabel.find(label);
      if (it == byLabel.end() || rank(n.kind) < it->second.first)
        byLabel[label] = {rank(n.kind), n.id};
    }
  for (CodeDock::Region &r : regions) {
    auto it = byLabel.find(baseLabel(r.label));
    if (it != byLabel.end())
      r.node = it->second.second;
  }
}

/// The name of the basic block line `l` of LLVM IR text starts, if it
/// starts one: `name:` or `"escaped name":`, then perhaps a comment.
std::optional<QString> blockName(const QString &l) {
  if (l.startsWith('"')) {
    qsizetype end = l.indexOf('"', 1); // a quote inside is `\22`
    if (end < 0 || end + 1 >= l.size() || l[end + 1] != ':')
      return std::nullopt;
    // The printer escapes `\` and unprintable bytes as `\XX` (hex).
    QByteArray in = l.mid(1, end - 1).toUtf8(), out;
    for (qsizetype i = 0; i < in.size(); ++i) {
      bool ok = false;
      if (in[i] == '\\' && i + 2 < in.size()) {
        char c = char(in.mid(i + 1, 2).toInt(&ok, 16));
        if (ok) {
          out.append(c);
          i += 2;
          continue;
        }
      }
      out.append(in[i]);
    }
    return QString::fromUtf8(out);
  }
  qsizetype end = 0;
  while (end < l.size() && (l[end].isLetterOrNumber() || l[end] == '-' ||
                            l[end] == '$' || l[end] == '.' || l[end] == '_'))
    ++end;
  if (end == 0 || end >= l.size() || l[end] != ':')
    return std::nullopt;
  return l.left(end);
}

/// The regions of LLVM IR text (codegen/cpu/llvm_emit.h): a block named
/// `<label>$…` (its label percent-encoded) opens one, which the next such block
/// or anything outside a block (the function's end) closes. Other blocks
/// (`entry`, a pass's `vector.body`) belong to the region they are in.
std::vector<CodeDock::Region> parseLLVMRegions(const QString &text) {
  std::vector<CodeDock::Region> done;
  std::optional<CodeDock::Region> open;
  auto close = [&](int last) {
    if (open && !open->label.isEmpty()) {
      open->last = last;
      done.push_back(*open);
    }
    open.reset();
  };
  const QStringList lines = text.split('\n');
  for (int i = 0; i < int(lines.size()); ++i) {
    const QString &l = lines[i];
    if (l.isEmpty() || l[0] == ' ' || l[0] == '\t')
      continue;
    std::optional<QString> name = blockName(l);
    if (!name) {
      close(i - 1);
      continue;
    }
    qsizetype sep = name->indexOf('$');
    if (sep < 0)
      continue;
    close(i - 1);
    QString label;
    for (qsizetype k = 0; k < sep; ++k) {
      QStringView code = QStringView(*name).mid(k, 3);
      if (code == QLatin1String("%24") || code == QLatin1String("%25")) {
        label += code == QLatin1String("%24") ? '$' : '%';
        k += 2;
      } else {
        label += (*name)[k];
      }
    }
    open = CodeDock::Region{label, std::nullopt, i, i};
  }
  close(int(lines.size()) - 1);
  return done;
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
      cppNote_(new QLabel),
      selectedOnly_(new QCheckBox(tr("Selected node only"))),
      mapNote_(new QLabel), llvmNote_(new QLabel), llvmStage_(new QComboBox),
      compile_(new QPushButton(tr("Compile"))) {
  setObjectName("code");
  cppMap_.view = codeView();
  llvmMap_.view = codeView();
  for (QLabel *l : {cppNote_, mapNote_, llvmNote_}) {
    l->setWordWrap(true);
    l->setTextFormat(Qt::PlainText);
  }
  // The filter applies to both tabs, so it sits above them.
  auto *page = new QWidget;
  auto *layout = new QVBoxLayout(page);
  selectedOnly_->setToolTip(tr("Show only the code of the node selected in "
                               "the graph"));
  layout->addWidget(selectedOnly_);
  layout->addWidget(mapNote_);
  mapNote_->hide();
  layout->addWidget(tabs_, 1);

  auto *cppPage = new QWidget;
  auto *cppLayout = new QVBoxLayout(cppPage);
  cppLayout->addWidget(cppNote_);
  cppLayout->addWidget(cppMap_.view, 1);
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
  llvmLayout->addWidget(llvmMap_.view, 1);
  tabs_->addTab(llvmPage, tr("LLVM IR"));
  setWidget(page);

  connect(&cpp_, &QFutureWatcher<Result>::finished, this, &CodeDock::showCpp);
  connect(&llvm_, &QFutureWatcher<Result>::finished, this, &CodeDock::showLLVM);
  connect(compile_, &QPushButton::clicked, this, &CodeDock::generateLLVMIR);
  connect(selectedOnly_, &QCheckBox::toggled, this, [this] { fill(); });
  for (CodeMap *m : {&cppMap_, &llvmMap_})
    connect(m->view, &QPlainTextEdit::cursorPositionChanged, this,
            [this, m] { onCursorMoved(*m); });
  connect(llvmStage_, &QComboBox::currentIndexChanged, this,
          &CodeDock::showLLVMStage);
  // Hidden, it makes nothing; shown again, it catches up.
  connect(this, &QDockWidget::visibilityChanged, this, [this](bool visible) {
    if (visible && cppMap_.program != program_)
      generateCpp();
  });
}

void CodeDock::setProgram(std::shared_ptr<const ir::Program> program) {
  program_ = std::move(program);
  llvmNote_->setText(tr("Compile to see the LLVM IR of this version."));
  llvmResult_ = {};
  showLLVMStage();
  if (isVisible())
    generateCpp();
}

void CodeDock::generateCpp() {
  if (!program_ || cpp_.isRunning())
    return; // showCpp() starts the newest when the running one ends
  std::shared_ptr<const ir::Program> p = program_;
  cpp_.setFuture(QtConcurrent::run([p] {
    Result r;
    r.program = p;
    try {
      ir::Program g = generable(*p, r.note);
      codegen::ExportedCpp cpp = codegen::exportCppWithMap(codegen::lower(g));
      r.text = QString::fromStdString(cpp.text);
      // The export's source map, resolved against the shown program, whose
      // ids the graph selects by: the expanded copy's nodes keep their
      // operators' labels.
      for (const codegen::SourceRegion &region : cpp.regions)
        r.regions.push_back({QString::fromStdString(region.label), std::nullopt,
                             region.first, region.last});
      resolveRegions(*p, r.regions);
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
  cppNote_->setText(r.note);
  cppNote_->setVisible(!r.note.isEmpty());
  cppMap_.program = r.program;
  cppMap_.text = r.text;
  cppMap_.regions = std::move(r.regions);
  fill(cppMap_);
  emit cppReady();
}

void CodeDock::showNode(std::optional<ir::NodeId> id) {
  node_ = id;
  fill();
}

std::optional<ir::NodeId> CodeDock::nodeAtLine(int line, Tab tab) const {
  // Regions are sorted by their first line and nest: the last one that
  // holds the line is the innermost.
  std::optional<ir::NodeId> node;
  for (const Region &r : mapOf(tab).regions) {
    if (r.first > line)
      break;
    if (line <= r.last)
      node = r.node;
  }
  return node;
}

std::vector<int> CodeDock::linesOf(ir::NodeId id, Tab tab) const {
  const CodeMap &m = mapOf(tab);
  std::set<int> lines;
  for (const Region &r : m.regions)
    if (r.node == id)
      for (int l = r.first; l <= r.last; ++l)
        lines.insert(l);
  if (lines.empty() && m.program) {
    // A node the code names by a label it shares with another (a map's
    // exit: its entry's loops).
    for (const ir::State &s : m.program->states)
      for (const ir::Node &n : s.nodes)
        if (n.id == id)
          for (const Region &r : m.regions)
            if (baseLabel(r.label) == QString::fromStdString(n.label))
              for (int l = r.first; l <= r.last; ++l)
                lines.insert(l);
  }
  return {lines.begin(), lines.end()};
}

std::vector<int> CodeDock::highlightedLines(Tab tab) const {
  const CodeMap &m = mapOf(tab);
  std::vector<int> lines;
  for (const QTextEdit::ExtraSelection &s : m.view->extraSelections()) {
    QTextDocument *doc = s.cursor.document();
    int from = doc->findBlock(s.cursor.selectionStart()).blockNumber();
    int to = doc->findBlock(s.cursor.selectionEnd()).blockNumber();
    for (int v = from; v <= to; ++v)
      if (v >= 0 && std::size_t(v) < m.shown.size())
        lines.push_back(m.shown[std::size_t(v)]);
  }
  return lines;
}

void CodeDock::fill() {
  fill(cppMap_);
  fill(llvmMap_);
}

void CodeDock::fill(CodeMap &m) {
  filling_ = true;
  const Tab tab = &m == &cppMap_ ? Tab::Cpp : Tab::LLVM;
  std::vector<int> mine = node_ ? linesOf(*node_, tab) : std::vector<int>();
  const QStringList lines = m.text.split('\n');
  QString text;
  m.shown.clear();
  if (selectedOnly_->isChecked()) {
    QStringList kept;
    for (int l : mine)
      if (l < int(lines.size())) {
        m.shown.push_back(l);
        kept.push_back(lines[l]);
      }
    text = kept.join('\n');
  } else {
    for (int l = 0; l < int(lines.size()); ++l)
      m.shown.push_back(l);
    text = m.text;
  }
  if (tab == Tab::Cpp) {
    // The C++ names every node that has code; the IR of one not compiled
    // yet is missing, not empty.
    mapNote_->setText(!selectedOnly_->isChecked() ? QString()
                      : !node_ ? tr("Select a node in the graph to see its "
                                    "code.")
                      : mine.empty() ? tr("The selected node has no code of "
                                          "its own.")
                                     : QString());
    mapNote_->setVisible(!mapNote_->text().isEmpty());
  }
  QPlainTextEdit *view = m.view;
  if (text != view->toPlainText())
    view->setPlainText(text);

  // Highlight runs of the node's lines, as the view shows them.
  std::set<int> marked(mine.begin(), mine.end());
  QList<QTextEdit::ExtraSelection> selections;
  QColor background = view->palette().color(QPalette::Highlight);
  background.setAlpha(60);
  QTextDocument *doc = view->document();
  int firstShown = -1;
  for (int v = 0; v < int(m.shown.size()); ++v) {
    if (!marked.count(m.shown[std::size_t(v)]))
      continue;
    int end = v;
    while (end + 1 < int(m.shown.size()) &&
           marked.count(m.shown[std::size_t(end + 1)]))
      ++end;
    QTextEdit::ExtraSelection s;
    s.format.setBackground(background);
    s.format.setProperty(QTextFormat::FullWidthSelection, true);
    s.cursor = QTextCursor(doc->findBlockByNumber(v));
    s.cursor.setPosition(doc->findBlockByNumber(end).position() +
                             doc->findBlockByNumber(end).length() - 1,
                         QTextCursor::KeepAnchor);
    selections.push_back(s);
    if (firstShown < 0)
      firstShown = v;
    v = end;
  }
  view->setExtraSelections(selections);
  // Scroll to the node's code, unless the cursor is in it already (the
  // user clicked there).
  int at = view->textCursor().blockNumber();
  bool inside = at >= 0 && std::size_t(at) < m.shown.size() &&
                marked.count(m.shown[std::size_t(at)]);
  if (firstShown >= 0 && !inside) {
    view->setTextCursor(QTextCursor(doc->findBlockByNumber(firstShown)));
    view->centerCursor();
  }
  filling_ = false;
}

void CodeDock::onCursorMoved(CodeMap &m) {
  if (filling_)
    return;
  int at = m.view->textCursor().blockNumber();
  if (at < 0 || std::size_t(at) >= m.shown.size())
    return;
  std::optional<ir::NodeId> node = nodeAtLine(
      m.shown[std::size_t(at)], &m == &cppMap_ ? Tab::Cpp : Tab::LLVM);
  if (node && node != node_)
    emit nodeActivated(*node);
}

void CodeDock::generateLLVMIR() {
  if (!program_ || llvm_.isRunning())
    return;
  compile_->setEnabled(false);
  llvmNote_->setText(tr("Compiling…"));
  std::shared_ptr<const ir::Program> p = program_;
  llvm_.setFuture(QtConcurrent::run([p] {
    Result r;
    r.program = p;
    try {
      ir::Program g = generable(*p, r.note);
      codegen::CompileOptions options;
      options.keepLLVMIR = true;
      codegen::Executable exe = codegen::compile(g, options);
      r.text = QString::fromStdString(exe.llvmIR());
      r.optimized = QString::fromStdString(exe.optimizedLLVMIR());
      r.regions = parseLLVMRegions(r.text);
      resolveRegions(*p, r.regions);
      r.optimizedRegions = parseLLVMRegions(r.optimized);
      resolveRegions(*p, r.optimizedRegions);
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
  llvmResult_ = std::move(r);
  llvmNote_->setText(llvmResult_.note);
  showLLVMStage();
  emit llvmReady();
}

void CodeDock::showLLVMStage() {
  bool optimized = llvmStage_->currentIndex() == 1;
  llvmMap_.program = llvmResult_.program;
  llvmMap_.text = optimized ? llvmResult_.optimized : llvmResult_.text;
  llvmMap_.regions =
      optimized ? llvmResult_.optimizedRegions : llvmResult_.regions;
  fill(llvmMap_);
}

QString CodeDock::cppText() const { return cppMap_.text; }
QString CodeDock::llvmText() const { return llvmMap_.text; }

} // namespace weir::studio
