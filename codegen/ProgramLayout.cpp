#include "codegen/ProgramLayout.h"

#include "codegen/Naming.h"

#include <variant>

namespace hector::codegen {

namespace {

/// Whether GEMM `g` writes every row of its output `out` (of space
/// `space`) plainly, no row twice and none left as it was.
bool writesEveryRow(const intra::GemmInstance &g, const intra::RowAccess &out,
                    ir::Space space) {
  // A GEMM that starts its output as a row writes every row first.
  if (g.initRow && out.value == g.output.value)
    return true;
  return g.mode == intra::GemmInstance::Mode::Linear &&
         g.accumulate == ir::Reduce::None && !g.atomic && out.isIdentity() &&
         intra::spaceOf(g.rows) == space;
}

} // namespace

ProgramLayout::ProgramLayout(const intra::Program &program, std::string entry)
    : program_(program), entry_(std::move(entry)) {
  for (const intra::ValueLayout &l : program.layouts)
    if (l.decl.kind != ir::ValueKind::Graph &&
        l.storage == intra::Storage::Buffer)
      buffers_.push_back(&l);
  // A buffer that is added into needs zeros first, unless the first
  // instance (in program order) that writes it writes every row: then the
  // adds come after a complete write (LowerToIntraOp's
  // accumulatePartialsIntoSums has a GEMM write the sum that another adds
  // into).
  std::set<std::string> written, coveredFirst;
  auto writes = [&](const std::string &root, bool everyRow) {
    if (written.insert(root).second && everyRow)
      coveredFirst.insert(root);
  };
  auto addsInto = [&](const std::string &root) {
    if (!coveredFirst.count(root))
      zeroFilled_.insert(root);
  };
  for (const intra::Instance &inst : program.instances) {
    if (const auto *g = std::get_if<intra::GemmInstance>(&inst)) {
      for (const intra::RowAccess *out : g->writes()) {
        const std::string r = root(out->value);
        writes(r, writesEveryRow(*g, *out, layout(r).decl.space));
      }
      // Outer-mode GEMMs always accumulate (their tiles meet in one
      // slice); linear ones when their statement reduces.
      if (g->mode == intra::GemmInstance::Mode::Outer ||
          g->accumulate != ir::Reduce::None)
        addsInto(root(g->output.value));
    } else if (const auto *t = std::get_if<intra::TraversalInstance>(&inst)) {
      intra::forEachTravStmt(*t->root, [&](const intra::TravStmt &s) {
        const std::string r = root(s.stmt.target.value);
        writes(r, false);
        if (s.reduction == intra::ReductionScheme::Atomic ||
            s.reduction == intra::ReductionScheme::PartialAtomic)
          addsInto(r);
      });
    } else if (const auto *f = std::get_if<intra::FallbackInstance>(&inst)) {
      intra::forEachTravStmt(*f->root, [&](const intra::TravStmt &s) {
        writes(root(s.stmt.target.value), false);
      });
    }
  }
}

std::string ProgramLayout::buffersType() const {
  std::string t = entry_;
  if (!t.empty())
    t[0] = static_cast<char>(t[0] - 'a' + 'A');
  return t + "Buffers";
}

const intra::ValueLayout &ProgramLayout::layout(const std::string &value) const {
  const intra::ValueLayout *l = program_.findLayout(value);
  if (!l)
    throw EmitError{"no layout for value '" + value + "' in @" +
                    program_.name};
  return *l;
}

std::string ProgramLayout::root(const std::string &value) const {
  std::string v = value;
  for (int guard = 0; guard < 1000; ++guard) {
    const intra::ValueLayout &l = layout(v);
    if (l.storage != intra::Storage::View)
      return v;
    v = l.viewOf;
  }
  throw EmitError{"view cycle at '" + value + "'"};
}

Home ProgramLayout::home(const std::string &value) const {
  const intra::ValueLayout &l = layout(root(value));
  if (l.decl.kind == ir::ValueKind::Graph)
    return Home::GraphArray;
  return l.storage == intra::Storage::Register ? Home::Register : Home::Buffer;
}

bool ProgramLayout::isReadOnly(const std::string &value) const {
  const ir::ValueKind k = layout(value).decl.kind;
  return k == ir::ValueKind::Input || k == ir::ValueKind::Param ||
         k == ir::ValueKind::Graph;
}

} // namespace hector::codegen
