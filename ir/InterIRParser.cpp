// Reads the textual inter-op IR (docs/ir.md) back into a Module: a lexer
// that turns the whole text into tokens first, then a recursive-descent
// parser over them. Keywords are contextual (a value may be called `shape`
// or `edges`), which is why the statement grammar is driven by the op: only
// `reshape`/`sum_to` (shape), `slice`/`embed` (start, size) and `transpose`
// (perm) are followed by attribute keywords.
//
// The parser sees untrusted text (it is fuzzed), so it stops at the first
// error, bounds every recursion (nested loops, scalar expressions, dims) and
// never asserts on its input.
#include "ir/InterIRParser.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hector::ir {

namespace {

enum class Tok {
  Name,
  Number,
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  LParen,
  RParen,
  Comma,
  Colon,
  Dot,
  At,
  Equal,
  PlusEqual,
  Plus,
  Minus,
  Star,
  Slash,
  End,
};

struct Token {
  Tok kind = Tok::End;
  std::string text;
  SourceLoc loc;
};

/// Deeper scalar expressions are rejected (the printer and the verifier
/// recurse over them too).
constexpr int kMaxScalarDepth = 200;
/// The verifier allows two levels; this only keeps the parser's own
/// recursion bounded on garbage.
constexpr int kMaxLoopDepth = 64;

bool isNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

class Lexer {
public:
  Lexer(const std::string &text, const std::string &file,
        DiagnosticEngine &diags)
      : text_(text), file_(file), diags_(diags) {}

  /// All tokens, ending with Tok::End; nullopt after reporting an error.
  std::optional<std::vector<Token>> run() {
    std::vector<Token> tokens;
    while (true) {
      skipSpaceAndComments();
      Token t;
      t.loc = here();
      if (pos_ >= text_.size()) {
        tokens.push_back(t);
        return tokens;
      }
      if (!lexOne(t))
        return std::nullopt;
      tokens.push_back(std::move(t));
    }
  }

private:
  SourceLoc here() const {
    return SourceLoc{file_, line_, static_cast<int>(pos_ - lineStart_) + 1};
  }
  char at(size_t k) const {
    return pos_ + k < text_.size() ? text_[pos_ + k] : '\0';
  }
  void advance(size_t n = 1) {
    for (size_t i = 0; i < n && pos_ < text_.size(); ++i) {
      if (text_[pos_++] == '\n') {
        ++line_;
        lineStart_ = pos_;
      }
    }
  }

  void skipSpaceAndComments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '/' && at(1) == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          advance();
      } else {
        return;
      }
    }
  }

  bool lexOne(Token &t) {
    size_t start = pos_;
    char c = text_[pos_];
    if (isNameStart(c)) {
      while (pos_ < text_.size() && isNameChar(text_[pos_]))
        advance();
      t.kind = Tok::Name;
    } else if (isDigit(c)) {
      lexNumber();
      t.kind = Tok::Number;
    } else if (c == '+' && at(1) == '=') {
      advance(2);
      t.kind = Tok::PlusEqual;
    } else if (auto kind = punct(c)) {
      advance();
      t.kind = *kind;
    } else {
      char shown[16];
      if (std::isprint(static_cast<unsigned char>(c)))
        std::snprintf(shown, sizeof shown, "'%c'", c);
      else
        std::snprintf(shown, sizeof shown, "'\\x%02x'",
                      static_cast<unsigned char>(c));
      diags_.error(t.loc, std::string("unexpected character ") + shown);
      return false;
    }
    t.text = text_.substr(start, pos_ - start);
    return true;
  }

  /// [0-9]+ ('.' [0-9]*)? ([eE] [+-]? [0-9]+)?  -- the exponent only when
  /// digits follow, so `3e` lexes as `3` then the name `e`.
  void lexNumber() {
    while (isDigit(at(0)))
      advance();
    if (at(0) == '.' && !isNameStart(at(1))) {
      advance();
      while (isDigit(at(0)))
        advance();
    }
    if (at(0) == 'e' || at(0) == 'E') {
      size_t sign = (at(1) == '+' || at(1) == '-') ? 1 : 0;
      if (isDigit(at(1 + sign))) {
        advance(1 + sign);
        while (isDigit(at(0)))
          advance();
      }
    }
  }

  static std::optional<Tok> punct(char c) {
    switch (c) {
    case '{':
      return Tok::LBrace;
    case '}':
      return Tok::RBrace;
    case '[':
      return Tok::LBracket;
    case ']':
      return Tok::RBracket;
    case '(':
      return Tok::LParen;
    case ')':
      return Tok::RParen;
    case ',':
      return Tok::Comma;
    case ':':
      return Tok::Colon;
    case '.':
      return Tok::Dot;
    case '@':
      return Tok::At;
    case '=':
      return Tok::Equal;
    case '+':
      return Tok::Plus;
    case '-':
      return Tok::Minus;
    case '*':
      return Tok::Star;
    case '/':
      return Tok::Slash;
    default:
      return std::nullopt;
    }
  }

  const std::string &text_;
  const std::string &file_;
  DiagnosticEngine &diags_;
  size_t pos_ = 0;
  size_t lineStart_ = 0;
  int line_ = 1;
};

std::optional<ValueKind> valueKindFromName(const std::string &word) {
  for (ValueKind k : {ValueKind::Input, ValueKind::Param, ValueKind::Graph,
                      ValueKind::Temp, ValueKind::Output})
    if (word == valueKindName(k))
      return k;
  return std::nullopt;
}

std::optional<LoopKind> topLoopKindFromName(const std::string &word) {
  for (LoopKind k :
       {LoopKind::Edges, LoopKind::Nodes, LoopKind::DstNodes,
        LoopKind::SrcNodes, LoopKind::EdgeTypes, LoopKind::NodeTypes,
        LoopKind::Pairs})
    if (word == loopKindName(k))
      return k;
  return std::nullopt;
}

std::optional<Attr> attrFromName(const std::string &word) {
  for (Attr a : {Attr::Src, Attr::Dst, Attr::EType, Attr::NType, Attr::Pair})
    if (word == attrName(a))
      return a;
  return std::nullopt;
}

class Parser {
public:
  Parser(std::vector<Token> tokens, DiagnosticEngine &diags)
      : tokens_(std::move(tokens)), diags_(diags) {}

  std::optional<Module> parseModule() {
    Module &m = module_;
    m.loc = peek().loc;
    if (!expectWord("module") || !expect(Tok::At, "'@'") ||
        !expectName(&m.name, "a module name") || !expect(Tok::LBrace, "'{'"))
      return std::nullopt;
    while (!at(Tok::RBrace)) {
      if (atWord("hyper") || (at(Tok::Name) && valueKindFromName(peek().text))) {
        if (!m.loops.empty())
          return fail("declarations must come before the loops");
        bool ok = atWord("hyper") ? parseHyper(m) : parseValue(m);
        if (!ok)
          return std::nullopt;
      } else if (atWord("foreach")) {
        auto loop = parseLoop(1);
        if (!loop)
          return std::nullopt;
        m.loops.push_back(std::move(loop));
      } else {
        return fail("expected a declaration, 'foreach' or '}'");
      }
    }
    advance();
    if (!at(Tok::End))
      return fail("expected end of input after the module, found " + found());
    return std::move(module_);
  }

private:
  // --- Token helpers -----------------------------------------------------

  const Token &peek(size_t k = 0) const {
    return tokens_[std::min(pos_ + k, tokens_.size() - 1)];
  }
  bool at(Tok kind, size_t k = 0) const { return peek(k).kind == kind; }
  bool atWord(const char *word, size_t k = 0) const {
    return at(Tok::Name, k) && peek(k).text == word;
  }
  void advance() {
    if (pos_ + 1 < tokens_.size())
      ++pos_;
  }

  std::string found() const {
    return at(Tok::End) ? "end of input" : "'" + peek().text + "'";
  }
  /// Reports at the current token; returns nullopt-convertible false.
  std::nullopt_t fail(const std::string &message) {
    diags_.error(peek().loc, message);
    return std::nullopt;
  }
  bool expect(Tok kind, const char *what) {
    if (!at(kind)) {
      fail(std::string("expected ") + what + ", found " + found());
      return false;
    }
    advance();
    return true;
  }
  bool expectWord(const char *word) {
    if (!atWord(word)) {
      fail(std::string("expected '") + word + "', found " + found());
      return false;
    }
    advance();
    return true;
  }
  bool expectName(std::string *out, const char *what) {
    if (!at(Tok::Name)) {
      fail(std::string("expected ") + what + ", found " + found());
      return false;
    }
    *out = peek().text;
    advance();
    return true;
  }

  // --- Declarations --------------------------------------------------------

  bool parseHyper(Module &m) {
    advance(); // 'hyper'
    HyperDecl h;
    h.loc = peek().loc;
    if (!expectName(&h.name, "a hyper-parameter name") ||
        !expect(Tok::Colon, "':'"))
      return false;
    if (atWord("int")) {
      h.type = HyperDecl::Type::Int;
    } else if (atWord("float")) {
      h.type = HyperDecl::Type::Float;
    } else {
      fail("expected 'int' or 'float', found " + found());
      return false;
    }
    advance();
    if (!expect(Tok::Equal, "'='"))
      return false;
    bool negative = at(Tok::Minus);
    if (negative)
      advance();
    std::optional<double> value = number();
    if (!value)
      return false;
    h.defaultValue = negative ? -*value : *value;
    if (h.type == HyperDecl::Type::Int &&
        (std::floor(h.defaultValue) != h.defaultValue ||
         std::fabs(h.defaultValue) >= 9.2e18)) {
      diags_.error(h.loc, "int hyper-parameter '" + h.name +
                              "' needs an integer value");
      return false;
    }
    m.hypers.push_back(std::move(h));
    return true;
  }

  bool parseValue(Module &m) {
    ValueDecl v;
    v.kind = *valueKindFromName(peek().text);
    advance();
    v.loc = peek().loc;
    if (!expectName(&v.name, "a value name") || !expect(Tok::Colon, "':'"))
      return false;
    std::optional<Space> space;
    if (at(Tok::Name))
      space = spaceFromName(peek().text);
    if (!space) {
      fail("expected a space (global, node, edge, pair, etype, ntype), found " +
           found());
      return false;
    }
    v.space = *space;
    advance();
    if (!parseShape(&v.shape))
      return false;
    if (atWord("const")) {
      v.constant = true;
      advance();
    }
    m.values.push_back(std::move(v));
    return true;
  }

  std::optional<double> number() {
    if (!at(Tok::Number)) {
      fail("expected a number, found " + found());
      return std::nullopt;
    }
    double v = std::strtod(peek().text.c_str(), nullptr);
    if (!std::isfinite(v)) {
      fail("number " + peek().text + " is out of range");
      return std::nullopt;
    }
    advance();
    return v;
  }

  // --- Dims and shapes -----------------------------------------------------

  bool parseShape(Shape *shape) {
    if (!expect(Tok::LBracket, "'['"))
      return false;
    if (at(Tok::RBracket)) {
      advance();
      return true;
    }
    while (true) {
      Dim d;
      if (!parseDimTokens(&d))
        return false;
      shape->push_back(std::move(d));
      if (at(Tok::Comma)) {
        advance();
        continue;
      }
      return expect(Tok::RBracket, "',' or ']' in shape");
    }
  }

  /// Finds where a dim expression ends (an operand not followed by an
  /// operator, outside parentheses), then lets parseDim read its text.
  bool parseDimTokens(Dim *out) {
    SourceLoc loc = peek().loc;
    std::string text;
    bool wantOperand = true;
    int depth = 0;
    while (true) {
      Tok k = peek().kind;
      if (wantOperand) {
        if (k == Tok::Plus || k == Tok::Minus || k == Tok::LParen) {
          depth += k == Tok::LParen;
        } else if (k == Tok::Name || k == Tok::Number) {
          wantOperand = false;
        } else {
          fail("expected a dimension, found " + found());
          return false;
        }
      } else if (k == Tok::Plus || k == Tok::Minus || k == Tok::Star ||
                 k == Tok::Slash) {
        wantOperand = true;
      } else if (k == Tok::RParen && depth > 0) {
        --depth;
      } else {
        break;
      }
      text += (text.empty() ? "" : " ") + peek().text;
      advance();
    }
    if (depth != 0) {
      fail("expected ')' in dimension, found " + found());
      return false;
    }
    std::string error;
    std::optional<Dim> d = parseDim(text, &error);
    if (!d) {
      diags_.error(loc, "invalid dimension '" + text + "': " + error);
      return false;
    }
    *out = std::move(*d);
    return true;
  }

  // --- Loops and statements ------------------------------------------------

  std::unique_ptr<Loop> parseLoop(int depth) {
    if (depth > kMaxLoopDepth) {
      fail("loops nested too deeply");
      return nullptr;
    }
    auto loop = std::make_unique<Loop>();
    loop->loc = peek().loc;
    advance(); // 'foreach'
    if (!expectName(&loop->var, "a loop variable") || !expectWord("in") ||
        !parseRange(*loop) || !expect(Tok::LBrace, "'{'"))
      return nullptr;
    while (!at(Tok::RBrace)) {
      if (atWord("foreach") && at(Tok::Name, 1)) {
        auto inner = parseLoop(depth + 1);
        if (!inner)
          return nullptr;
        loop->body.emplace_back(std::move(inner));
      } else {
        std::optional<Stmt> stmt = parseStmt();
        if (!stmt)
          return nullptr;
        loop->body.emplace_back(std::move(*stmt));
      }
    }
    advance();
    return loop;
  }

  bool parseRange(Loop &loop) {
    if (at(Tok::Name) && at(Tok::Dot, 1)) {
      loop.parent = peek().text;
      advance();
      advance();
      if (atWord("incoming")) {
        loop.kind = LoopKind::Incoming;
      } else if (atWord("outgoing")) {
        loop.kind = LoopKind::Outgoing;
      } else {
        fail("expected 'incoming' or 'outgoing', found " + found());
        return false;
      }
      advance();
      return true;
    }
    std::optional<LoopKind> kind;
    if (at(Tok::Name))
      kind = topLoopKindFromName(peek().text);
    if (!kind) {
      fail("expected a loop range (edges, nodes, dst_nodes, src_nodes, "
           "etypes, ntypes, pairs, VAR.incoming, VAR.outgoing), found " +
           found());
      return false;
    }
    loop.kind = *kind;
    advance();
    return true;
  }

  std::optional<Stmt> parseStmt() {
    Stmt s;
    s.loc = peek().loc;
    if (!at(Tok::Name))
      return fail("expected a statement, found " + found());
    if (!parseAccess(&s.target) || !parseReduce(&s.reduce))
      return std::nullopt;
    std::optional<OpKind> op;
    if (at(Tok::Name))
      op = opFromName(peek().text);
    if (!op)
      return fail(at(Tok::Name) ? "unknown operation " + found()
                                : "expected an operation, found " + found());
    s.op = *op;
    advance();
    if (!expect(Tok::LParen, "'('"))
      return std::nullopt;
    if (!at(Tok::RParen)) {
      while (true) {
        std::optional<Operand> operand = parseOperand();
        if (!operand)
          return std::nullopt;
        s.operands.push_back(std::move(*operand));
        if (!at(Tok::Comma))
          break;
        advance();
      }
    }
    if (!expect(Tok::RParen, "',' or ')' after an operand"))
      return std::nullopt;
    if (s.op == OpKind::Reshape || s.op == OpKind::SumTo) {
      if (!expectWord("shape") || !parseShape(&s.shape))
        return std::nullopt;
    } else if (s.op == OpKind::Slice || s.op == OpKind::Embed) {
      if (!expectWord("start") || !parseDimTokens(&s.sliceStart) ||
          !expectWord("size") || !parseDimTokens(&s.sliceSize))
        return std::nullopt;
    } else if (s.op == OpKind::Transpose) {
      if (!expectWord("perm") || !parsePerm(&s.perm))
        return std::nullopt;
    }
    return s;
  }

  /// '[' [INT (',' INT)*] ']': axis numbers, checked by the verifier.
  bool parsePerm(std::vector<int> *perm) {
    if (!expect(Tok::LBracket, "'['"))
      return false;
    if (at(Tok::RBracket)) {
      advance();
      return true;
    }
    while (true) {
      const std::string &text = peek().text;
      bool digits = at(Tok::Number) && text.size() <= 6 &&
                    text.find_first_not_of("0123456789") == std::string::npos;
      if (!digits) {
        fail("expected an axis number, found " + found());
        return false;
      }
      perm->push_back(std::stoi(text));
      advance();
      if (at(Tok::Comma)) {
        advance();
        continue;
      }
      return expect(Tok::RBracket, "',' or ']' in perm");
    }
  }

  bool parseReduce(Reduce *r) {
    if (at(Tok::Equal)) {
      *r = Reduce::None;
    } else if (at(Tok::PlusEqual)) {
      *r = Reduce::Sum;
    } else if ((atWord("mean") || atWord("max")) && at(Tok::Equal, 1)) {
      *r = atWord("mean") ? Reduce::Mean : Reduce::Max;
      advance();
    } else {
      fail("expected '=', '+=', 'mean=' or 'max=', found " + found());
      return false;
    }
    advance();
    return true;
  }

  bool parseAccess(Access *a) {
    a->loc = peek().loc;
    if (!expectName(&a->value, "a value name"))
      return false;
    if (!at(Tok::LBracket))
      return true;
    advance();
    if (!expectName(&a->index.var, "a loop variable"))
      return false;
    while (at(Tok::Dot)) {
      advance();
      std::optional<Attr> attr;
      if (at(Tok::Name))
        attr = attrFromName(peek().text);
      if (!attr) {
        fail("expected src, dst, etype, ntype or pair, found " + found());
        return false;
      }
      a->index.attrs.push_back(*attr);
      advance();
    }
    return expect(Tok::RBracket, "'.' or ']' in index");
  }

  std::optional<Operand> parseOperand() {
    bool scalar = at(Tok::Number) || at(Tok::LParen) || at(Tok::Minus) ||
                  (atWord("sqrt") && at(Tok::LParen, 1));
    // A bare name is a scalar when it names a hyper-parameter (docs/ir.md);
    // hypers are all declared before the loops, so this is known here.
    if (at(Tok::Name) && !at(Tok::LBracket, 1) && isHyper(peek().text))
      scalar = true;
    if (scalar) {
      std::optional<ScalarExpr> e = parseScalar(0);
      if (!e)
        return std::nullopt;
      return Operand(std::move(*e));
    }
    Access a;
    if (!parseAccess(&a))
      return std::nullopt;
    return Operand(std::move(a));
  }

  std::optional<ScalarExpr> parseScalar(int depth) {
    if (depth > kMaxScalarDepth)
      return fail("scalar expression nested too deeply");
    ScalarExpr e;
    if (at(Tok::Number)) {
      std::optional<double> v = number();
      if (!v)
        return std::nullopt;
      e.literal = *v;
      return e;
    }
    if (at(Tok::Minus) || (atWord("sqrt") && at(Tok::LParen, 1))) {
      bool isSqrt = at(Tok::Name);
      e.kind = isSqrt ? ScalarExpr::Kind::Sqrt : ScalarExpr::Kind::Neg;
      advance();
      if (isSqrt)
        advance();
      std::optional<ScalarExpr> arg = parseScalar(depth + 1);
      if (!arg || (isSqrt && !expect(Tok::RParen, "')'")))
        return std::nullopt;
      e.args.push_back(std::move(*arg));
      return e;
    }
    if (at(Tok::LParen)) {
      advance();
      std::optional<ScalarExpr> lhs = parseScalar(depth + 1);
      if (!lhs)
        return std::nullopt;
      switch (peek().kind) {
      case Tok::Plus:
        e.kind = ScalarExpr::Kind::Add;
        break;
      case Tok::Minus:
        e.kind = ScalarExpr::Kind::Sub;
        break;
      case Tok::Star:
        e.kind = ScalarExpr::Kind::Mul;
        break;
      case Tok::Slash:
        e.kind = ScalarExpr::Kind::Div;
        break;
      default:
        return fail("expected '+', '-', '*' or '/' in scalar expression, "
                    "found " +
                    found());
      }
      advance();
      std::optional<ScalarExpr> rhs = parseScalar(depth + 1);
      if (!rhs || !expect(Tok::RParen, "')'"))
        return std::nullopt;
      e.args.push_back(std::move(*lhs));
      e.args.push_back(std::move(*rhs));
      return e;
    }
    if (at(Tok::Name)) {
      e.kind = ScalarExpr::Kind::Hyper;
      e.hyper = peek().text;
      advance();
      return e;
    }
    return fail("expected a scalar expression, found " + found());
  }

  bool isHyper(const std::string &name) const {
    return module_.findHyper(name) != nullptr;
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  DiagnosticEngine &diags_;
  Module module_; ///< being built; its hypers decide bare-name operands
};

} // namespace

std::optional<Module> parseModule(const std::string &text,
                                  const std::string &file,
                                  DiagnosticEngine &diags) {
  diags.addSource(file, text);
  std::optional<std::vector<Token>> tokens = Lexer(text, file, diags).run();
  if (!tokens)
    return std::nullopt;
  int errorsBefore = diags.errorCount();
  Parser parser(std::move(*tokens), diags);
  std::optional<Module> m = parser.parseModule();
  if (diags.errorCount() != errorsBefore)
    return std::nullopt;
  return m;
}

} // namespace hector::ir
