#include "codegen/ProgramLayout.h"

#include "codegen/Naming.h"

#include <variant>

namespace hector::codegen {

ProgramLayout::ProgramLayout(const intra::Program &program, std::string entry)
    : program_(program), entry_(std::move(entry)) {
  for (const intra::ValueLayout &l : program.layouts)
    if (l.decl.kind != ir::ValueKind::Graph &&
        l.storage == intra::Storage::Buffer)
      buffers_.push_back(&l);
  for (const intra::Instance &inst : program.instances) {
    if (const auto *g = std::get_if<intra::GemmInstance>(&inst)) {
      // Outer-mode GEMMs always accumulate (their tiles meet in one
      // slice); linear ones when their statement reduces.
      if (g->mode == intra::GemmInstance::Mode::Outer ||
          g->accumulate != ir::Reduce::None)
        zeroFilled_.insert(root(g->output.value));
    } else if (const auto *t = std::get_if<intra::TraversalInstance>(&inst)) {
      intra::forEachTravStmt(*t->root, [&](const intra::TravStmt &s) {
        if (s.reduction == intra::ReductionScheme::Atomic ||
            s.reduction == intra::ReductionScheme::PartialAtomic)
          zeroFilled_.insert(root(s.stmt.target.value));
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
