#include "codegen/OutputDependences.h"

#include <fmt/format.h>

#include <variant>

namespace hector::codegen {

namespace {

/// The values an instance reads and writes.
struct Accesses {
  std::vector<std::string> reads, writes;
};

Accesses accessesOf(const intra::Instance &inst) {
  Accesses a;
  if (const auto *g = std::get_if<intra::GemmInstance>(&inst)) {
    for (const intra::RowAccess *in : g->reads())
      a.reads.push_back(in->value);
    for (const intra::RowAccess *out : g->writes())
      a.writes.push_back(out->value);
    // An accumulating output (outer mode always accumulates) is read as
    // well: its earlier writers count.
    if (g->mode == intra::GemmInstance::Mode::Outer ||
        g->accumulate != ir::Reduce::None)
      a.reads.push_back(g->output.value);
  } else if (const auto *t = std::get_if<intra::TraversalInstance>(&inst)) {
    intra::forEachTravStmt(*t->root, [&](const intra::TravStmt &s) {
      for (const ir::Operand &op : s.stmt.operands)
        if (const auto *acc = std::get_if<ir::Access>(&op))
          a.reads.push_back(acc->value);
      a.writes.push_back(s.stmt.target.value);
    });
  }
  return a;
}

} // namespace

OutputDependences::OutputDependences(const ProgramLayout &layout)
    : layout_(layout) {
  const intra::Program &p = layout.program();
  size_t outputs = 0;
  for (const intra::ValueLayout &l : p.layouts)
    if (l.decl.kind == ir::ValueKind::Output) {
      if (outputs < 64)
        roots_[layout.root(l.decl.name)] |= OutputMask(1) << outputs;
      ++outputs;
    }
  tooMany_ = outputs > 64;
  all_ = tooMany_ || outputs == 64 ? ~OutputMask(0)
                                   : (OutputMask(1) << outputs) - 1;
  // Program order is a topological order (an instance reads what earlier
  // ones wrote), so one backward pass gives each instance the union of
  // what its readers feed.
  std::vector<Accesses> accesses;
  for (const intra::Instance &inst : p.instances)
    accesses.push_back(accessesOf(inst));
  instances_.assign(p.instances.size(), 0);
  for (size_t i = p.instances.size(); i-- > 0;) {
    OutputMask mask = 0;
    for (const std::string &w : accesses[i].writes)
      mask |= ofValue(w);
    instances_[i] = mask;
    for (const std::string &r : accesses[i].reads)
      roots_[layout.root(r)] |= mask;
  }
  for (size_t i = 0; i < p.instances.size(); ++i)
    for (const std::string &w : accesses[i].writes)
      writers_[layout.root(w)] |= instances_[i];
}

OutputMask OutputDependences::ofValue(const std::string &value) const {
  auto it = roots_.find(layout_.root(value));
  return it == roots_.end() ? 0 : it->second;
}

OutputMask OutputDependences::ofZeroFill(const std::string &value) const {
  auto it = writers_.find(layout_.root(value));
  return ofValue(value) | (it == writers_.end() ? 0 : it->second);
}

std::optional<std::string> OutputDependences::guard(OutputMask mask) const {
  // An instance that feeds every output, or none (nothing would skip it
  // before this analysis either), runs unguarded.
  if (tooMany_ || (mask & all_) == all_ || mask == 0)
    return std::nullopt;
  return fmt::format("hp.hector_needed_outputs & UINT64_C({:#x})", mask);
}

} // namespace hector::codegen
