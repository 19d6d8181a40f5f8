// Symbolic tensor dimensions.
//
// A model's shapes are written in terms of its hyper-parameters
// (`[heads, out_dim / heads]`), and the generated library binds those
// hyper-parameters only when a layer is constructed. A Dim is therefore a
// small polynomial over hyper-parameter names with integer coefficients and
// integer (possibly negative) exponents, kept in a canonical form so that
// two dims are equal exactly when their canonical forms are equal:
// `out_dim / heads * heads` is `out_dim`, `2 * d + d` is `3 * d`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hector::ir {

/// One product term: coeff * prod(symbol ^ exponent).
struct DimTerm {
  int64_t coeff = 1;
  /// symbol -> exponent, never 0. Ordered, so the term prints stably.
  std::map<std::string, int> powers;

  bool operator==(const DimTerm &o) const {
    return coeff == o.coeff && powers == o.powers;
  }
};

/// A canonical sum of DimTerms (terms with the same powers merged, zero
/// terms removed, terms ordered by their powers).
class Dim {
public:
  Dim() = default; // the constant 0
  static Dim constant(int64_t value);
  static Dim symbol(const std::string &name);

  Dim operator+(const Dim &o) const;
  Dim operator-(const Dim &o) const;
  Dim operator*(const Dim &o) const;
  /// Division is exact only by a single term (a monomial); returns nullopt
  /// when `o` is a sum of several terms or zero.
  std::optional<Dim> divide(const Dim &o) const;

  bool operator==(const Dim &o) const { return terms_ == o.terms_; }
  bool operator!=(const Dim &o) const { return !(*this == o); }

  bool isConstant() const;
  /// The value when isConstant().
  int64_t constantValue() const;
  const std::vector<DimTerm> &terms() const { return terms_; }

  /// Evaluates with integer bindings. Fails (nullopt, with `error` set) on an
  /// unbound symbol or a non-integral result (e.g. out_dim=10, heads=3).
  std::optional<int64_t>
  evaluate(const std::map<std::string, int64_t> &bindings,
           std::string *error = nullptr) const;

  /// Canonical text: `in_dim`, `out_dim/heads`, `3*out_dim`, `in_dim+out_dim`,
  /// `64`. Parsable by parseDim().
  std::string str() const;

private:
  void canonicalize();
  std::vector<DimTerm> terms_;
};

/// Reads a dim back from text: str()'s canonical form and, more generally,
/// integer expressions with + - * / and parentheses over names and integers
/// (`heads * (out_dim / heads)` reads as `out_dim`). Division must be exact
/// and by a single term. Returns nullopt with `error` set on bad syntax,
/// inexact division, overflow, or an expression nested or expanded too far.
std::optional<Dim> parseDim(const std::string &text,
                            std::string *error = nullptr);

/// Per-element shape of a value: [] is a scalar.
using Shape = std::vector<Dim>;

std::string shapeStr(const Shape &shape); // "[heads, out_dim/heads]"

/// Evaluates every dim of a shape; nullopt with `error` set on failure.
std::optional<std::vector<int64_t>>
evaluateShape(const Shape &shape, const std::map<std::string, int64_t> &bindings,
              std::string *error = nullptr);

} // namespace hector::ir
