#include "ir/print.h"

#include "ir/program.h"

#include <cstdio>
#include <sstream>

namespace weir::ir {
namespace {

std::string shapeText(const std::vector<Expr> &shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + shape[i].str();
  return s + "]";
}

std::string doubleText(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", d);
  return buf;
}

/// A string in double quotes, with quotes, backslashes and control
/// characters escaped so that a label or attribute cannot break the line
/// structure of the listing.
std::string quoted(const std::string &text) {
  static const char *kHex = "0123456789abcdef";
  std::string s = "\"";
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\')
      s += {'\\', ch};
    else if (ch == '\n')
      s += "\\n";
    else if (ch == '\t')
      s += "\\t";
    else if (c < 0x20 || c == 0x7f)
      s += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
    else
      s += ch;
  }
  return s + "\"";
}

template <typename T, typename F>
std::string listText(const std::vector<T> &v, F &&item,
                     std::size_t limit = 16) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size() && i < limit; ++i)
    s += (i ? ", " : "") + item(v[i]);
  if (v.size() > limit)
    s += ", ... (" + std::to_string(v.size()) + " items)";
  return s + "]";
}

class Printer {
public:
  Printer(const PrintOptions &options) : options_(options) {}

  void program(const Program &p, const std::string &indent) {
    out_ << indent << "program " << p.name << "\n";
    if (!p.symbols.empty()) {
      out_ << indent << "  symbols";
      for (const std::string &s : p.symbols)
        out_ << " " << s;
      out_ << "\n";
    }
    for (const std::string &name : p.inputs)
      containerLine(p, name, "input ", indent);
    for (const auto &[name, c] : p.containers)
      if (c.transient)
        containerLine(p, name, c.isConstant() ? "const " : "transient ",
                      indent);
      else if (!isArgument(p, name))
        containerLine(p, name, c.isConstant() ? "const " : "global ", indent);
    for (const std::string &name : p.outputs)
      containerLine(p, name, "output ", indent);
    for (const State &s : p.states)
      state(s, indent);
  }

  std::string str() const { return out_.str(); }

private:
  static bool isArgument(const Program &p, const std::string &name) {
    for (const std::string &a : p.inputs)
      if (a == name)
        return true;
    for (const std::string &a : p.outputs)
      if (a == name)
        return true;
    return false;
  }

  void containerLine(const Program &p, const std::string &name,
                     const char *role, const std::string &indent) {
    const Container *c = p.findContainer(name);
    out_ << indent << "  " << role << name;
    if (!c) {
      out_ << ": <missing>\n";
      return;
    }
    out_ << ": " << dtypeName(c->dtype) << shapeText(c->shape);
    if (c->strides != rowMajorStrides(c->shape))
      out_ << " strides " << shapeText(c->strides);
    if (c->storage != Storage::Host)
      out_ << " @" << storageName(c->storage);
    if (c->constant)
      out_ << "  (" << c->constant->size() << " B)";
    if (c->isView())
      out_ << "  view of " << c->viewOf;
    out_ << "\n";
  }

  static std::string connectorsText(const std::vector<Connector> &cs) {
    std::string s = "(";
    for (std::size_t i = 0; i < cs.size(); ++i)
      s += (i ? ", " : "") + cs[i].name + ": " +
           std::string(dtypeName(cs[i].dtype));
    return s + ")";
  }

  std::string attributeText(const AttributeValue &v,
                            const std::string &indent) {
    return std::visit(
        [&](const auto &x) -> std::string {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::int64_t>)
            return std::to_string(x);
          else if constexpr (std::is_same_v<T, double>)
            return doubleText(x);
          else if constexpr (std::is_same_v<T, std::string>)
            return quoted(x);
          else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>)
            return listText(x,
                            [](std::int64_t i) { return std::to_string(i); });
          else if constexpr (std::is_same_v<T, std::vector<double>>)
            return listText(x, doubleText);
          else if constexpr (std::is_same_v<T, std::vector<std::string>>)
            return listText(x, quoted);
          else if constexpr (std::is_same_v<T, TensorValue>) {
            std::vector<Expr> shape(x.shape.begin(), x.shape.end());
            return "tensor " + std::string(dtypeName(x.dtype)) +
                   shapeText(shape);
          } else {
            if (!x)
              return "graph <none>";
            if (!options_.expandSubgraphs)
              return "graph " + x->name + " (" +
                     std::to_string(x->nodeCount()) + " nodes)";
            Printer inner(options_);
            inner.program(*x, indent + "      ");
            return "graph\n" + inner.str() + indent + "    ";
          }
        },
        v);
  }

  std::string attributesText(const Attributes &attrs,
                             const std::string &indent) {
    if (attrs.empty())
      return "";
    std::string s = " {";
    bool first = true;
    for (const auto &[name, v] : attrs) {
      s += (first ? "" : ", ") + name + "=" + attributeText(v, indent);
      first = false;
    }
    return s + "}";
  }

  void node(const Node &n, const std::string &indent) {
    out_ << indent << "  %" << n.id << " " << nodeKindName(n.kind);
    switch (n.kind) {
    case NodeKind::Access:
      out_ << " " << n.access().container;
      if (n.label != n.access().container)
        out_ << " " << quoted(n.label);
      out_ << "\n";
      return;
    case NodeKind::Tasklet: {
      out_ << " " << quoted(n.label) << " " << connectorsText(n.inputs)
           << " -> " << connectorsText(n.outputs) << " {";
      // One line: statements joined with "; " (the body's own separator).
      std::string code = n.tasklet().source;
      while (!code.empty() && code.back() == '\n')
        code.pop_back();
      for (std::size_t at = code.find('\n'); at != std::string::npos;
           at = code.find('\n', at))
        code.replace(at, 1, "; ");
      out_ << " " << code << " }\n";
      return;
    }
    case NodeKind::MapEntry:
    case NodeKind::MapExit: {
      const MapData &m = n.map();
      out_ << " " << quoted(n.label);
      if (n.kind == NodeKind::MapEntry) {
        out_ << " [";
        for (std::size_t i = 0; i < m.params.size(); ++i)
          out_ << (i ? ", " : "") << m.params[i] << " = "
               << (i < m.ranges.size() ? m.ranges[i].str() : "?");
        out_ << "] " << scheduleName(m.schedule);
      }
      out_ << " (pair %" << m.partner << ")";
      break;
    }
    case NodeKind::Library: {
      const LibraryData &l = n.library();
      out_ << " " << (l.domain.empty() ? "" : l.domain + ".") << l.op << " "
           << quoted(n.label);
      if (l.opsetVersion)
        out_ << " opset " << l.opsetVersion;
      if (!l.implementation.empty())
        out_ << " impl=" << l.implementation;
      if (l.unknown)
        out_ << " UNSUPPORTED";
      out_ << attributesText(l.attributes, indent);
      break;
    }
    case NodeKind::Primitive:
      out_ << " " << n.primitive().primitive << " " << quoted(n.label)
           << attributesText(n.primitive().attributes, indent);
      break;
    }
    out_ << "\n"
         << indent << "       in " << connectorsText(n.inputs) << " out "
         << connectorsText(n.outputs) << "\n";
  }

  void state(const State &s, const std::string &indent) {
    out_ << indent << "state " << s.name << "\n";
    for (const Node &n : s.nodes)
      node(n, indent);
    for (const Edge &e : s.edges) {
      out_ << indent << "  %" << e.src;
      if (!e.srcConn.empty())
        out_ << "." << e.srcConn;
      out_ << " -> %" << e.dst;
      if (!e.dstConn.empty())
        out_ << "." << e.dstConn;
      out_ << "  " << e.memlet.str() << "\n";
    }
  }

  const PrintOptions &options_;
  std::ostringstream out_;
};

} // namespace

std::string print(const Program &program, const PrintOptions &options) {
  Printer p(options);
  p.program(program, "");
  return p.str();
}

std::string describe(const Node &n, std::string_view word) {
  return std::string(word.empty() ? nodeKindName(n.kind) : word) + " '" +
         n.label + "' (%" + std::to_string(n.id) + ")";
}

} // namespace weir::ir
