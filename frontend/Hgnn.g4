// The .hgnn language (docs/dsl.md). Blocks use braces and statements end
// at NEWLINE. HgnnTokenSource (frontend/Parser.cpp) post-processes the
// lexer's tokens so that this grammar can stay LL(1):
//   - NEWLINEs inside (...) or [...] are dropped (implicit line joining);
//   - consecutive NEWLINEs collapse into one, and a NEWLINE directly after
//     '{' or at the start of the file is dropped;
//   - a NEWLINE is inserted before every '}' and before EOF when the
//     previous token was not one, so every item and statement ends in one.
// Semantics (which names exist, what `g.edges()` is) are checked by Sema,
// not here: the grammar accepts any postfix expression as a loop range.
grammar Hgnn;

file : (topItem NEWLINE)* EOF ;

topItem : importDecl | defDecl | modelDecl ;

importDecl : 'import' STRING ;

defDecl : 'def' ID '(' (ID (',' ID)*)? ')' '{' (defLet NEWLINE)* 'return' expr NEWLINE '}' ;

defLet : ID '=' expr ;

modelDecl : 'model' ID '{' (modelItem NEWLINE)* '}' ;

modelItem : hyperDecl | valueDecl | stmt ;

hyperDecl : 'hyper' ID '=' expr ;

// `input x : node[in_dim]`, `weight W : etype[in_dim, out_dim]`,
// `weight b : [out_dim]`, `input norm : edge[] const`,
// `weight K, Q, V : ntype[in_dim, out_dim]` (several of one shape).
valueDecl : kind=('input' | 'weight' | 'output') names+=ID (',' names+=ID)* ':' space=ID? '[' (expr (',' expr)*)? ']' isConst='const'? ;

stmt : forStmt | assignStmt ;

forStmt : 'for' ID 'in' expr '{' (stmt NEWLINE)* '}' ;

assignStmt : expr op=('=' | '+=') expr ;

expr : addExpr ;

addExpr : mulExpr (op+=('+' | '-') mulExpr)* ;

mulExpr : unaryExpr (op+=('*' | '/') unaryExpr)* ;

// A loop, not recursion, so that `- - - ... x` cannot exhaust the stack.
unaryExpr : neg+='-'* postfixExpr ;

postfixExpr : primary postfixOp* ;

postfixOp
  : '.' ID                      # memberOp
  | '[' expr ']'                # indexOp
  | '(' (arg (',' arg)*)? ')'   # callOp
  ;

// `sum(e.x for e in n.incoming_edges())`: a generator argument.
arg : expr ('for' ID 'in' expr)? ;

primary
  : ID            # namePrimary
  | NUMBER        # numberPrimary
  | STRING        # stringPrimary
  | '(' expr ')'  # parenPrimary
  ;

NUMBER : [0-9]+ ('.' [0-9]*)? ([eE] [+-]? [0-9]+)?
       | '.' [0-9]+ ([eE] [+-]? [0-9]+)?
       ;
ID : [A-Za-z_] [A-Za-z0-9_]* ;
STRING : '"' ~["\r\n]* '"' ;
NEWLINE : '\r'? '\n' ;
COMMENT : '#' ~[\r\n]* -> skip ;
WS : [ \t\f]+ -> skip ;
LINE_JOIN : '\\' '\r'? '\n' -> skip ;
