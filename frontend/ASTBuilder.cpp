#include "frontend/ASTBuilder.h"

#include "HgnnLexer.h"
#include "HgnnParser.h"
#include "antlr4-runtime.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <vector>

namespace hector::frontend {
namespace {

using P = HgnnParser;

/// Forwards ANTLR's syntax errors (lexer and parser) to the engine. After a
/// fatal error (nesting too deep) the rest are suppressed: they would only
/// be consequences of the truncated token stream.
class DiagListener : public antlr4::BaseErrorListener {
public:
  DiagListener(const std::string &file, ir::DiagnosticEngine &diags)
      : file_(file), diags_(diags) {}

  void syntaxError(antlr4::Recognizer *, antlr4::Token *offending,
                   size_t line, size_t col, const std::string &msg,
                   std::exception_ptr) override {
    if (fatal_)
      return;
    // Tokens the token source inserted say so in their text; ANTLR would
    // print them as '\n'.
    std::string text = msg;
    if (offending && offending->getType() == HgnnLexer::NEWLINE) {
      const std::string raw = "'\\n'";
      for (size_t pos = text.find(raw); pos != std::string::npos;
           pos = text.find(raw))
        text.replace(pos, raw.size(), "end of line");
    }
    error(static_cast<int>(line), static_cast<int>(col) + 1, text);
  }

  void error(int line, int col, const std::string &msg) {
    ++count_;
    diags_.error(SourceLoc{file_, line, col}, msg);
  }
  void fatal(int line, int col, const std::string &msg) {
    error(line, col, msg);
    fatal_ = true;
  }
  int count() const { return count_; }

private:
  std::string file_;
  ir::DiagnosticEngine &diags_;
  bool fatal_ = false;
  int count_ = 0;
};

/// The lexer plus the NEWLINE rules of Hgnn.g4's header comment, and the
/// nesting limit: past kMaxNesting open brackets it reports an error and
/// ends the token stream, so the recursive-descent parser never sees the
/// deep part.
class HgnnTokenSource : public HgnnLexer {
public:
  HgnnTokenSource(antlr4::CharStream *input, DiagListener &listener)
      : HgnnLexer(input), listener_(listener) {
    const antlr4::dfa::Vocabulary &vocab = getVocabulary();
    for (size_t t = 1; t <= vocab.getMaxTokenType(); ++t) {
      std::string lit = vocab.getLiteralName(t);
      if (lit.size() == 3)
        literal_[lit[1]] = t;
    }
  }

  std::unique_ptr<antlr4::Token> nextToken() override {
    while (true) {
      if (pending_)
        return std::move(pending_);
      std::unique_ptr<antlr4::Token> tok =
          stopped_ ? makeEof() : HgnnLexer::nextToken();
      const size_t ttype = tok->getType();
      if (ttype == NEWLINE) {
        if (!stack_.empty() && stack_.back() != '{')
          continue; // implicit line joining
        if (lastType_ == NEWLINE || lastType_ == 0 || lastType_ == lit('{'))
          continue;
        lastType_ = NEWLINE;
        return tok;
      }
      // Insert the NEWLINE that ends the last statement of a block / file.
      if ((ttype == lit('}') || ttype == antlr4::Token::EOF) &&
          lastType_ != NEWLINE && lastType_ != 0 && lastType_ != lit('{')) {
        lastType_ = NEWLINE;
        pending_ = std::move(tok);
        return makeNewline(*pending_);
      }
      track(*tok);
      lastType_ = ttype;
      return tok;
    }
  }

private:
  /// The token type of a one-character literal such as '{'.
  size_t lit(char c) const {
    auto it = literal_.find(c);
    return it == literal_.end() ? 0 : it->second;
  }

  void track(const antlr4::Token &tok) {
    const size_t t = tok.getType();
    if (t == lit('(') || t == lit('[') || t == lit('{')) {
      stack_.push_back(t == lit('(') ? '(' : t == lit('[') ? '[' : '{');
      if (static_cast<int>(stack_.size()) > kMaxNesting) {
        listener_.fatal(static_cast<int>(tok.getLine()),
                        static_cast<int>(tok.getCharPositionInLine()) + 1,
                        "brackets nested deeper than " +
                            std::to_string(kMaxNesting) + " levels");
        stopped_ = true;
      }
    } else if (t == lit(')') || t == lit(']')) {
      const char open = t == lit(')') ? '(' : '[';
      if (!stack_.empty() && stack_.back() == open)
        stack_.pop_back();
    } else if (t == lit('}')) {
      // Close the brace and any brackets left open inside it.
      auto it = std::find(stack_.rbegin(), stack_.rend(), '{');
      if (it != stack_.rend())
        stack_.erase(std::next(it).base(), stack_.end());
    }
  }

  std::unique_ptr<antlr4::Token> makeNewline(const antlr4::Token &next) {
    auto tok = std::make_unique<antlr4::CommonToken>(
        std::make_pair(static_cast<antlr4::TokenSource *>(this), _input),
        NEWLINE, antlr4::Token::DEFAULT_CHANNEL, next.getStartIndex(),
        next.getStartIndex() - 1);
    tok->setText("\n");
    tok->setLine(next.getLine());
    tok->setCharPositionInLine(next.getCharPositionInLine());
    return tok;
  }

  std::unique_ptr<antlr4::Token> makeEof() {
    auto tok = std::make_unique<antlr4::CommonToken>(
        std::make_pair(static_cast<antlr4::TokenSource *>(this), _input),
        antlr4::Token::EOF, antlr4::Token::DEFAULT_CHANNEL,
        _input->index(), _input->index() - 1);
    tok->setText("<EOF>");
    tok->setLine(getLine());
    tok->setCharPositionInLine(getCharPositionInLine());
    return tok;
  }

  DiagListener &listener_;
  std::map<char, size_t> literal_;
  std::vector<char> stack_;
  std::unique_ptr<antlr4::Token> pending_;
  size_t lastType_ = 0;
  bool stopped_ = false;
};

/// Parse tree -> AST. Called only on trees without syntax errors, so every
/// child the grammar requires is present.
class Builder {
public:
  Builder(const std::string &file, DiagListener &listener)
      : file_(file), listener_(listener) {}

  std::unique_ptr<File> build(P::FileContext *ctx) {
    auto out = std::make_unique<File>();
    out->name = file_;
    for (P::TopItemContext *item : ctx->topItem()) {
      if (auto *imp = item->importDecl()) {
        Import i;
        i.loc = loc(imp->getStart());
        i.path = unquote(imp->STRING()->getText());
        out->imports.push_back(std::move(i));
      } else if (auto *def = item->defDecl()) {
        out->funcs.push_back(buildDef(def));
      } else if (auto *model = item->modelDecl()) {
        out->models.push_back(buildModel(model));
      }
    }
    return out;
  }

private:
  SourceLoc loc(antlr4::Token *tok) const {
    return SourceLoc{file_, static_cast<int>(tok->getLine()),
                     static_cast<int>(tok->getCharPositionInLine()) + 1};
  }
  SourceLoc loc(antlr4::ParserRuleContext *ctx) const {
    return loc(ctx->getStart());
  }

  static std::string unquote(const std::string &s) {
    return s.size() >= 2 ? s.substr(1, s.size() - 2) : s;
  }

  FuncDef buildDef(P::DefDeclContext *ctx) {
    FuncDef def;
    def.loc = loc(ctx);
    std::vector<antlr4::tree::TerminalNode *> ids = ctx->ID();
    def.name = ids[0]->getText();
    for (size_t i = 1; i < ids.size(); ++i) {
      def.params.push_back(ids[i]->getText());
      def.paramLocs.push_back(loc(ids[i]->getSymbol()));
    }
    for (P::DefLetContext *let : ctx->defLet()) {
      def.lets.emplace_back(let->ID()->getText(), buildExpr(let->expr()));
      def.letLocs.push_back(loc(let));
    }
    def.result = buildExpr(ctx->expr());
    return def;
  }

  Model buildModel(P::ModelDeclContext *ctx) {
    Model m;
    m.loc = loc(ctx);
    m.name = ctx->ID()->getText();
    for (P::ModelItemContext *item : ctx->modelItem()) {
      const bool isDecl = item->hyperDecl() || item->valueDecl();
      if (isDecl && m.firstStmtLoc.valid())
        m.lateDecls.push_back(loc(item));
      if (auto *h = item->hyperDecl()) {
        HyperDef def;
        def.loc = loc(h);
        def.name = h->ID()->getText();
        def.value = buildExpr(h->expr());
        m.hypers.push_back(std::move(def));
      } else if (auto *v = item->valueDecl()) {
        for (ValueDef &def : buildValues(v))
          m.values.push_back(std::move(def));
      } else if (auto *s = item->stmt()) {
        if (!m.firstStmtLoc.valid())
          m.firstStmtLoc = loc(s);
        m.body.push_back(buildStmt(s));
      }
    }
    return m;
  }

  /// One ValueDef per declared name (`weight K, Q : ...` declares two).
  std::vector<ValueDef> buildValues(P::ValueDeclContext *ctx) {
    ValueDef v;
    v.loc = loc(ctx);
    const std::string kind = ctx->kind->getText();
    v.kind = kind == "input"    ? ValueDef::Kind::Input
             : kind == "weight" ? ValueDef::Kind::Weight
                                : ValueDef::Kind::Output;
    if (ctx->space) {
      v.space = ctx->space->getText();
      v.spaceLoc = loc(ctx->space);
    }
    for (P::ExprContext *d : ctx->expr())
      v.dims.push_back(buildExpr(d));
    v.constant = ctx->isConst != nullptr;
    std::vector<ValueDef> out;
    for (antlr4::Token *name : ctx->names) {
      ValueDef one;
      one.kind = v.kind;
      one.name = name->getText();
      one.space = v.space;
      one.spaceLoc = v.spaceLoc;
      one.constant = v.constant;
      one.loc = out.empty() ? v.loc : loc(name);
      for (const ExprPtr &d : v.dims)
        one.dims.push_back(d->clone());
      out.push_back(std::move(one));
    }
    return out;
  }

  StmtPtr buildStmt(P::StmtContext *ctx) {
    auto s = std::make_unique<Stmt>();
    s->loc = loc(ctx);
    if (auto *f = ctx->forStmt()) {
      s->kind = Stmt::Kind::For;
      s->var = f->ID()->getText();
      s->varLoc = loc(f->ID()->getSymbol());
      s->range = buildExpr(f->expr());
      for (P::StmtContext *child : f->stmt())
        s->body.push_back(buildStmt(child));
    } else {
      P::AssignStmtContext *a = ctx->assignStmt();
      s->kind = Stmt::Kind::Assign;
      s->target = buildExpr(a->expr(0));
      s->accumulate = a->op->getText() == "+=";
      s->value = buildExpr(a->expr(1));
    }
    return s;
  }

  /// Keeps expression trees shallow enough for every recursive walk.
  /// Past the limit the expression is reported and replaced by a leaf.
  ExprPtr checkDepth(ExprPtr e, int depth) {
    if (depth <= kMaxExprDepth)
      return e;
    if (!depthReported_) {
      depthReported_ = true;
      listener_.error(e->loc.line, e->loc.col,
                      "expression nested deeper than " +
                          std::to_string(kMaxExprDepth) + " levels");
    }
    return node(Expr::Kind::Number, e->loc);
  }

  ExprPtr node(Expr::Kind kind, const SourceLoc &at) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->loc = at;
    return e;
  }

  ExprPtr buildExpr(P::ExprContext *ctx) { return buildAdd(ctx->addExpr()); }

  ExprPtr buildAdd(P::AddExprContext *ctx) {
    std::vector<P::MulExprContext *> terms = ctx->mulExpr();
    ExprPtr acc = buildMul(terms[0]);
    for (size_t i = 1; i < terms.size(); ++i) {
      ExprPtr rhs = buildMul(terms[i]);
      acc = binary(ctx->op[i - 1], std::move(acc), std::move(rhs));
    }
    return acc;
  }

  ExprPtr buildMul(P::MulExprContext *ctx) {
    std::vector<P::UnaryExprContext *> terms = ctx->unaryExpr();
    ExprPtr acc = buildUnary(terms[0]);
    for (size_t i = 1; i < terms.size(); ++i) {
      ExprPtr rhs = buildUnary(terms[i]);
      acc = binary(ctx->op[i - 1], std::move(acc), std::move(rhs));
    }
    return acc;
  }

  ExprPtr binary(antlr4::Token *op, ExprPtr lhs, ExprPtr rhs) {
    const int depth = std::max(exprDepth(*lhs), exprDepth(*rhs)) + 1;
    ExprPtr e = node(Expr::Kind::Binary, lhs->loc);
    e->binop = op->getText()[0];
    e->args.push_back(std::move(lhs));
    e->args.push_back(std::move(rhs));
    return checkDepth(std::move(e), depth);
  }

  ExprPtr buildUnary(P::UnaryExprContext *ctx) {
    ExprPtr e = buildPostfix(ctx->postfixExpr());
    // `- - x` is `x`: fold the chain so its length cannot matter.
    if (ctx->neg.size() % 2 == 1) {
      ExprPtr n = node(Expr::Kind::Neg, loc(ctx->neg[0]));
      const int depth = exprDepth(*e) + 1;
      n->args.push_back(std::move(e));
      return checkDepth(std::move(n), depth);
    }
    return e;
  }

  ExprPtr buildPostfix(P::PostfixExprContext *ctx) {
    ExprPtr e = buildPrimary(ctx->primary());
    for (P::PostfixOpContext *op : ctx->postfixOp()) {
      int depth = exprDepth(*e) + 1;
      ExprPtr n;
      if (auto *m = dynamic_cast<P::MemberOpContext *>(op)) {
        n = node(Expr::Kind::Member, e->loc);
        n->text = m->ID()->getText();
        n->args.push_back(std::move(e));
      } else if (auto *ix = dynamic_cast<P::IndexOpContext *>(op)) {
        n = node(Expr::Kind::Index, e->loc);
        ExprPtr index = buildExpr(ix->expr());
        depth = std::max(depth, exprDepth(*index) + 1);
        n->args.push_back(std::move(e));
        n->args.push_back(std::move(index));
      } else {
        auto *call = static_cast<P::CallOpContext *>(op);
        n = node(Expr::Kind::Call, e->loc);
        n->args.push_back(std::move(e));
        for (P::ArgContext *a : call->arg()) {
          std::vector<P::ExprContext *> parts = a->expr();
          ExprPtr arg = buildExpr(parts[0]);
          if (a->ID()) {
            arg->genVar = a->ID()->getText();
            arg->genRange = buildExpr(parts[1]);
            depth = std::max(depth, exprDepth(*arg->genRange) + 1);
          }
          depth = std::max(depth, exprDepth(*arg) + 1);
          n->args.push_back(std::move(arg));
        }
      }
      e = checkDepth(std::move(n), depth);
    }
    return e;
  }

  ExprPtr buildPrimary(P::PrimaryContext *ctx) {
    if (auto *n = dynamic_cast<P::NamePrimaryContext *>(ctx)) {
      ExprPtr e = node(Expr::Kind::Name, loc(ctx));
      e->text = n->ID()->getText();
      return e;
    }
    if (auto *num = dynamic_cast<P::NumberPrimaryContext *>(ctx)) {
      ExprPtr e = node(Expr::Kind::Number, loc(ctx));
      const std::string text = num->NUMBER()->getText();
      e->text = text;
      e->number = std::strtod(text.c_str(), nullptr);
      e->isInteger = text.find_first_of(".eE") == std::string::npos;
      return e;
    }
    if (auto *s = dynamic_cast<P::StringPrimaryContext *>(ctx)) {
      ExprPtr e = node(Expr::Kind::String, loc(ctx));
      e->text = unquote(s->STRING()->getText());
      return e;
    }
    auto *paren = static_cast<P::ParenPrimaryContext *>(ctx);
    return buildExpr(paren->expr());
  }

  std::string file_;
  DiagListener &listener_;
  bool depthReported_ = false;
};

} // namespace

int exprDepth(const Expr &e) {
  int depth = 0;
  for (const ExprPtr &a : e.args)
    depth = std::max(depth, exprDepth(*a));
  if (e.genRange)
    depth = std::max(depth, exprDepth(*e.genRange));
  return depth + 1;
}

std::unique_ptr<File> parseHgnn(const std::string &text,
                                const std::string &file,
                                ir::DiagnosticEngine &diags) {
  DiagListener listener(file, diags);
  if (text.size() > kMaxSourceBytes) {
    listener.error(1, 1, "file is larger than " +
                             std::to_string(kMaxSourceBytes) + " bytes");
    return nullptr;
  }
  try {
    antlr4::ANTLRInputStream input(text);
    HgnnTokenSource lexer(&input, listener);
    lexer.removeErrorListeners();
    lexer.addErrorListener(&listener);
    antlr4::CommonTokenStream tokens(&lexer);
    HgnnParser parser(&tokens);
    parser.removeErrorListeners();
    parser.addErrorListener(&listener);
    HgnnParser::FileContext *tree = parser.file();
    if (listener.count() > 0)
      return nullptr;
    Builder builder(file, listener);
    std::unique_ptr<File> ast = builder.build(tree);
    if (listener.count() > 0)
      return nullptr;
    return ast;
  } catch (const std::exception &e) {
    // The runtime throws on input it cannot decode (invalid UTF-8).
    listener.error(1, 1, std::string("cannot read the file: ") + e.what());
    return nullptr;
  }
}

} // namespace hector::frontend
