#include "codegen/Naming.h"

#include <fmt/format.h>

#include <vector>

namespace hector::codegen {

std::string hyperLocal(const std::string &hyper) { return "hp_" + hyper; }
std::string sizeLocal(const std::string &value) { return "sz_" + value; }
std::string registerLocal(const std::string &value) { return "r_" + value; }
std::string loopVarLocal(const std::string &var) { return "v_" + var; }
std::string csrPosLocal(const std::string &var) { return "c_" + var; }

namespace {

std::string product(const std::vector<std::string> &factors) {
  if (factors.empty())
    return "INT64_C(1)";
  std::string s = factors[0];
  for (size_t i = 1; i < factors.size(); ++i)
    s += " * " + factors[i];
  return factors.size() == 1 ? s : "(" + s + ")";
}

std::string termExpr(const ir::DimTerm &term) {
  std::vector<std::string> num, den;
  if (term.coeff != 1 || term.powers.empty())
    num.push_back(fmt::format("INT64_C({})", term.coeff));
  for (const auto &[symbol, power] : term.powers)
    for (int i = 0; i < (power > 0 ? power : -power); ++i)
      (power > 0 ? num : den).push_back(hyperLocal(symbol));
  if (den.empty())
    return product(num);
  return "(" + product(num) + " / " + product(den) + ")";
}

} // namespace

std::string dimExpr(const ir::Dim &dim) {
  const std::vector<ir::DimTerm> &terms = dim.terms();
  if (terms.empty())
    return "INT64_C(0)";
  if (terms.size() == 1)
    return termExpr(terms[0]);
  std::string s = "(" + termExpr(terms[0]);
  for (size_t i = 1; i < terms.size(); ++i)
    s += " + " + termExpr(terms[i]);
  return s + ")";
}

ir::Dim shapeSize(const ir::Shape &shape) {
  ir::Dim size = ir::Dim::constant(1);
  for (const ir::Dim &d : shape)
    size = size * d;
  return size;
}

std::string ratioExpr(const ir::Dim &size, const ir::Dim &part) {
  if (size == part)
    return "INT64_C(1)";
  if (std::optional<ir::Dim> q = size.divide(part))
    return dimExpr(*q);
  return "(" + dimExpr(size) + " / " + dimExpr(part) + ")";
}

std::string scalarExpr(const ir::ScalarExpr &e) {
  using K = ir::ScalarExpr::Kind;
  switch (e.kind) {
  case K::Literal:
    return fmt::format("{:.17g}", e.literal);
  case K::Hyper:
    return "static_cast<double>(" + hyperLocal(e.hyper) + ")";
  case K::Neg:
    return "(-" + scalarExpr(e.args.at(0)) + ")";
  case K::Sqrt:
    return "std::sqrt(" + scalarExpr(e.args.at(0)) + ")";
  case K::Add:
    return "(" + scalarExpr(e.args.at(0)) + " + " + scalarExpr(e.args.at(1)) + ")";
  case K::Sub:
    return "(" + scalarExpr(e.args.at(0)) + " - " + scalarExpr(e.args.at(1)) + ")";
  case K::Mul:
    return "(" + scalarExpr(e.args.at(0)) + " * " + scalarExpr(e.args.at(1)) + ")";
  case K::Div:
    return "(" + scalarExpr(e.args.at(0)) + " / " + scalarExpr(e.args.at(1)) + ")";
  }
  return "0.0";
}

std::string rowCountExpr(intra::RowScheme rows) {
  switch (rows) {
  case intra::RowScheme::EdgeRows:
  case intra::RowScheme::EntryRows:
  case intra::RowScheme::DstCsrRows:
  case intra::RowScheme::SrcCsrRows:
    return "g.num_edges";
  case intra::RowScheme::PairRows:
    return "g.num_pairs";
  case intra::RowScheme::NodeRows:
    return "g.num_nodes";
  case intra::RowScheme::ChunkRows:
    return "g.num_sum_chunks";
  case intra::RowScheme::EdgeTypeRows:
    return "g.num_etypes";
  case intra::RowScheme::NodeTypeRows:
    return "g.num_ntypes";
  case intra::RowScheme::Global:
    return "INT64_C(1)";
  }
  return "INT64_C(1)";
}

std::string bufferNumelExpr(intra::RowScheme rows, const std::string &value) {
  return rowCountExpr(rows) + " * " + sizeLocal(value);
}

std::string rowCountExpr(intra::RowDomain rows) {
  switch (rows) {
  case intra::RowDomain::Edges:
    return "g.num_edges";
  case intra::RowDomain::Pairs:
    return "g.num_pairs";
  case intra::RowDomain::Nodes:
    return "g.num_nodes";
  case intra::RowDomain::EdgeTypes:
    return "g.num_etypes";
  case intra::RowDomain::NodeTypes:
    return "g.num_ntypes";
  }
  return "INT64_C(0)";
}

} // namespace hector::codegen
