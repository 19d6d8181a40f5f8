// Symbolic dims: canonical polynomials over hyper-parameter names.
//
// All arithmetic goes through one accumulator (a map from powers to
// coefficient) so that merging equal terms and dropping zero terms happen in
// one place. The public operators cannot fail, so they wrap on int64 overflow
// (defined behaviour, never UB); parseDim, which sees user text, runs the
// same arithmetic with overflow and size checks first and reports them.
#include "ir/Dim.h"

#include <cctype>
#include <cstdlib>

namespace hector::ir {

namespace {

using Powers = std::map<std::string, int>;

/// A polynomial being built: powers -> coefficient, plus whether any
/// coefficient or exponent overflowed on the way.
struct Accum {
  std::map<Powers, int64_t> terms;
  bool overflow = false;

  void add(const Powers &powers, int64_t coeff) {
    int64_t &slot = terms[powers];
    // __builtin_add_overflow stores the wrapped sum, so the result stays
    // defined even when the flag is set.
    if (__builtin_add_overflow(slot, coeff, &slot))
      overflow = true;
  }
};

/// Terms are too many for any real model; this bounds the cost of
/// expanding products of sums on adversarial input.
constexpr size_t kMaxTerms = 256;

/// Nesting bound for parseDim's recursive descent.
constexpr int kMaxDepth = 200;

bool multiplyPowers(const Powers &a, const Powers &b, Powers *out) {
  *out = a;
  bool overflow = false;
  for (const auto &[sym, exp] : b) {
    int &slot = (*out)[sym];
    if (__builtin_add_overflow(slot, exp, &slot))
      overflow = true;
    if (slot == 0)
      out->erase(sym);
  }
  return !overflow;
}

Accum sumTerms(const std::vector<DimTerm> &a, const std::vector<DimTerm> &b,
               int64_t bSign) {
  Accum acc;
  for (const DimTerm &t : a)
    acc.add(t.powers, t.coeff);
  for (const DimTerm &t : b) {
    int64_t c;
    if (__builtin_mul_overflow(t.coeff, bSign, &c))
      acc.overflow = true;
    acc.add(t.powers, c);
  }
  return acc;
}

Accum multiplyTerms(const std::vector<DimTerm> &a,
                    const std::vector<DimTerm> &b) {
  Accum acc;
  for (const DimTerm &x : a) {
    for (const DimTerm &y : b) {
      int64_t c;
      if (__builtin_mul_overflow(x.coeff, y.coeff, &c))
        acc.overflow = true;
      Powers p;
      if (!multiplyPowers(x.powers, y.powers, &p))
        acc.overflow = true;
      acc.add(p, c);
    }
  }
  return acc;
}

/// Divides every term by the monomial `m`; false when a coefficient does
/// not divide exactly (or on overflow).
bool divideTerms(const std::vector<DimTerm> &a, const DimTerm &m, Accum *acc) {
  Powers inverse;
  for (const auto &[sym, exp] : m.powers) {
    if (exp == INT32_MIN)
      return false;
    inverse[sym] = -exp;
  }
  for (const DimTerm &t : a) {
    if (t.coeff % m.coeff != 0 || (t.coeff == INT64_MIN && m.coeff == -1))
      return false;
    Powers p;
    if (!multiplyPowers(t.powers, inverse, &p))
      return false;
    acc->add(p, t.coeff / m.coeff);
  }
  return !acc->overflow;
}

/// Canonical order: terms by their powers, the constant term last (so sums
/// read `in_dim+1`).
std::vector<DimTerm> toTerms(const Accum &acc) {
  std::vector<DimTerm> terms;
  std::optional<int64_t> constant;
  for (const auto &[powers, coeff] : acc.terms) {
    if (coeff == 0)
      continue;
    if (powers.empty()) {
      constant = coeff;
      continue;
    }
    terms.push_back(DimTerm{coeff, powers});
  }
  if (constant)
    terms.push_back(DimTerm{*constant, {}});
  return terms;
}

uint64_t magnitude(int64_t v) {
  return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

/// Prints a term without its sign: `3*a*b/c`, `a`, `1/heads`, `64`.
std::string termText(const DimTerm &t) {
  std::string num, den;
  for (const auto &[sym, exp] : t.powers) {
    for (int i = 0; i < exp; ++i)
      num += (num.empty() ? "" : "*") + sym;
    for (int i = 0; i > exp; --i)
      den += "/" + sym;
  }
  uint64_t c = magnitude(t.coeff);
  if (num.empty())
    return std::to_string(c) + den;
  if (c != 1)
    num = std::to_string(c) + "*" + num;
  return num + den;
}

bool anyTooLarge(const Accum &acc, std::string *error) {
  if (acc.overflow) {
    if (error)
      *error = "integer overflow in dimension";
    return true;
  }
  if (acc.terms.size() > kMaxTerms) {
    if (error)
      *error = "dimension expression has too many terms";
    return true;
  }
  for (const auto &entry : acc.terms) {
    // INT64_MIN has no printable positive magnitude that reads back.
    if (entry.second == INT64_MIN) {
      if (error)
        *error = "integer overflow in dimension";
      return true;
    }
  }
  return false;
}

/// Recursive-descent reader for parseDim:
///   expr  := term (('+' | '-') term)*
///   term  := unary (('*' | '/') unary)*
///   unary := ('-' | '+') unary | INT | NAME | '(' expr ')'
class DimReader {
public:
  explicit DimReader(const std::string &text) : text_(text) {}

  std::optional<Dim> read(std::string *error) {
    std::optional<Dim> d = expr(0);
    skipSpace();
    if (d && pos_ != text_.size())
      fail("unexpected '" + std::string(1, text_[pos_]) + "' in dimension");
    if (!error_.empty()) {
      if (error)
        *error = error_;
      return std::nullopt;
    }
    return d;
  }

private:
  void skipSpace() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool accept(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<Dim> fail(const std::string &message) {
    if (error_.empty())
      error_ = message;
    return std::nullopt;
  }

  std::optional<Dim> combine(const Dim &a, const Dim &b, char op) {
    std::string err;
    switch (op) {
    case '+':
    case '-': {
      if (anyTooLarge(sumTerms(a.terms(), b.terms(), op == '+' ? 1 : -1),
                      &err))
        return fail(err);
      return op == '+' ? a + b : a - b;
    }
    case '*':
      if (anyTooLarge(multiplyTerms(a.terms(), b.terms()), &err))
        return fail(err);
      return a * b;
    default: {
      std::optional<Dim> q = a.divide(b);
      if (!q)
        return fail("cannot divide '" + a.str() + "' by '" + b.str() +
                    "' exactly");
      return q;
    }
    }
  }

  std::optional<Dim> expr(int depth) {
    std::optional<Dim> lhs = term(depth);
    while (lhs) {
      char op;
      if (accept('+'))
        op = '+';
      else if (accept('-'))
        op = '-';
      else
        break;
      std::optional<Dim> rhs = term(depth);
      if (!rhs)
        return std::nullopt;
      lhs = combine(*lhs, *rhs, op);
    }
    return lhs;
  }

  std::optional<Dim> term(int depth) {
    std::optional<Dim> lhs = unary(depth);
    while (lhs) {
      char op;
      if (accept('*'))
        op = '*';
      else if (accept('/'))
        op = '/';
      else
        break;
      std::optional<Dim> rhs = unary(depth);
      if (!rhs)
        return std::nullopt;
      lhs = combine(*lhs, *rhs, op);
    }
    return lhs;
  }

  std::optional<Dim> unary(int depth) {
    if (depth > kMaxDepth)
      return fail("dimension expression nested too deeply");
    if (accept('-')) {
      std::optional<Dim> d = unary(depth + 1);
      return d ? combine(Dim(), *d, '-') : std::nullopt;
    }
    if (accept('+'))
      return unary(depth + 1);
    if (accept('(')) {
      std::optional<Dim> d = expr(depth + 1);
      if (d && !accept(')'))
        return fail("expected ')' in dimension");
      return d;
    }
    skipSpace();
    if (pos_ >= text_.size())
      return fail("expected a dimension");
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)))
      return integer();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
              text_[pos_] == '_'))
        ++pos_;
      return Dim::symbol(text_.substr(start, pos_ - start));
    }
    return fail("unexpected '" + std::string(1, c) + "' in dimension");
  }

  std::optional<Dim> integer() {
    int64_t value = 0;
    while (pos_ < text_.size() &&
           std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, text_[pos_] - '0', &value))
        return fail("integer overflow in dimension");
      ++pos_;
    }
    return Dim::constant(value);
  }

  const std::string &text_;
  size_t pos_ = 0;
  std::string error_;
};

} // namespace

Dim Dim::constant(int64_t value) {
  Dim d;
  if (value != 0)
    d.terms_.push_back(DimTerm{value, {}});
  return d;
}

Dim Dim::symbol(const std::string &name) {
  Dim d;
  d.terms_.push_back(DimTerm{1, {{name, 1}}});
  return d;
}

Dim Dim::operator+(const Dim &o) const {
  Dim d;
  d.terms_ = toTerms(sumTerms(terms_, o.terms_, 1));
  return d;
}

Dim Dim::operator-(const Dim &o) const {
  Dim d;
  d.terms_ = toTerms(sumTerms(terms_, o.terms_, -1));
  return d;
}

Dim Dim::operator*(const Dim &o) const {
  Dim d;
  d.terms_ = toTerms(multiplyTerms(terms_, o.terms_));
  return d;
}

std::optional<Dim> Dim::divide(const Dim &o) const {
  if (o.terms_.size() != 1)
    return std::nullopt;
  Accum acc;
  if (!divideTerms(terms_, o.terms_.front(), &acc))
    return std::nullopt;
  Dim d;
  d.terms_ = toTerms(acc);
  return d;
}

bool Dim::isConstant() const {
  return terms_.empty() || (terms_.size() == 1 && terms_[0].powers.empty());
}

int64_t Dim::constantValue() const {
  return terms_.empty() ? 0 : terms_[0].coeff;
}

void Dim::canonicalize() {
  Accum acc;
  for (const DimTerm &t : terms_)
    acc.add(t.powers, t.coeff);
  terms_ = toTerms(acc);
}

std::optional<int64_t>
Dim::evaluate(const std::map<std::string, int64_t> &bindings,
              std::string *error) const {
  auto fail = [&](const std::string &message) -> std::optional<int64_t> {
    if (error)
      *error = message;
    return std::nullopt;
  };
  // Exact rational arithmetic in 128 bits: each term is num/den, and only
  // the sum has to be an integer (`a/2 + b/2` with a + b even is fine).
  __int128 sumNum = 0, sumDen = 1;
  bool overflow = false;
  auto mul = [&](__int128 a, __int128 b) {
    __int128 r;
    if (__builtin_mul_overflow(a, b, &r))
      overflow = true;
    return r;
  };
  for (const DimTerm &t : terms_) {
    __int128 num = t.coeff, den = 1;
    for (const auto &[sym, exp] : t.powers) {
      auto it = bindings.find(sym);
      if (it == bindings.end())
        return fail("unbound symbol '" + sym + "' in dimension '" + str() +
                    "'");
      if (exp < 0 && it->second == 0)
        return fail("division by zero in dimension '" + str() + "' (" + sym +
                    "=0)");
      for (int i = 0; i < (exp < 0 ? -exp : exp) && !overflow; ++i) {
        if (exp > 0)
          num = mul(num, it->second);
        else
          den = mul(den, it->second);
      }
    }
    if (den < 0) {
      num = -num;
      den = -den;
    }
    __int128 n = mul(sumNum, den), m = mul(num, sumDen);
    if (__builtin_add_overflow(n, m, &sumNum))
      overflow = true;
    sumDen = mul(sumDen, den);
    // Keep the fraction small so long sums do not overflow needlessly.
    __int128 a = sumNum < 0 ? -sumNum : sumNum, b = sumDen;
    while (b != 0) {
      __int128 r = a % b;
      a = b;
      b = r;
    }
    if (a > 1) {
      sumNum /= a;
      sumDen /= a;
    }
    if (overflow)
      return fail("integer overflow evaluating dimension '" + str() + "'");
  }
  if (sumDen != 1) {
    std::string values;
    for (const DimTerm &t : terms_)
      for (const auto &entry : t.powers)
        if (values.find(entry.first + "=") == std::string::npos)
          values += (values.empty() ? "" : ", ") + entry.first + "=" +
                    std::to_string(bindings.at(entry.first));
    return fail("dimension '" + str() + "' is not an integer when " + values);
  }
  if (sumNum > INT64_MAX || sumNum < INT64_MIN)
    return fail("integer overflow evaluating dimension '" + str() + "'");
  return static_cast<int64_t>(sumNum);
}

std::string Dim::str() const {
  if (terms_.empty())
    return "0";
  std::string out;
  for (const DimTerm &t : terms_) {
    if (t.coeff < 0)
      out += "-";
    else if (!out.empty())
      out += "+";
    out += termText(t);
  }
  return out;
}

std::optional<Dim> parseDim(const std::string &text, std::string *error) {
  return DimReader(text).read(error);
}

std::string shapeStr(const Shape &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + shape[i].str();
  return out + "]";
}

std::optional<std::vector<int64_t>>
evaluateShape(const Shape &shape, const std::map<std::string, int64_t> &bindings,
              std::string *error) {
  std::vector<int64_t> out;
  for (const Dim &d : shape) {
    std::optional<int64_t> v = d.evaluate(bindings, error);
    if (!v)
      return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

} // namespace hector::ir
