// Walks over a module's loops and statements, and the clean-up that passes
// which move or delete statements share: dropping the loops they leave
// empty.
#pragma once

#include "ir/InterIR.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace hector::passes {

/// edges, n.incoming, n.outgoing: the loops whose variable is an edge.
bool isEdgeLoop(ir::LoopKind kind);

/// Calls `f` on every loop nested in `loop`, `loop` included, outermost
/// first, with the chain of enclosing loops (`loop` last).
void forEachLoop(ir::Loop &loop, std::vector<ir::Loop *> &scopes,
                 const std::function<void(ir::Loop &,
                                          std::vector<ir::Loop *> &)> &f);

/// Calls `f` on every statement of the module, loop by loop (a loop's own
/// statements before those of the loops nested in it), with its enclosing
/// loops (innermost last).
void forEachStmt(ir::Module &m,
                 const std::function<void(ir::Stmt &,
                                          const std::vector<ir::Loop *> &)> &f);

/// The loop among `scopes` (enclosing loops, innermost last) whose
/// variable is `var`, the innermost one; nullptr when none binds it. The
/// second form takes the scopes of a walk over a const module
/// (ShapeInference).
const ir::Loop *bindingLoop(const std::vector<ir::Loop *> &scopes,
                            const std::string &var);
const ir::Loop *bindingLoop(const std::vector<const ir::Loop *> &scopes,
                            const std::string &var);

/// How many operands of the module's statements read `value` (a statement
/// that reads it twice counts twice).
int readCount(ir::Module &m, const std::string &value);

/// Whether `value` is a temp that no later phase needs: not in `keep` (the
/// values the backward reads), so a pass may rewrite, move or delete it.
bool isUnkeptTemp(const ir::Module &m, const std::string &value,
                  const std::set<std::string> &keep);

/// `base` when no value has that name, else the first free `base_1`,
/// `base_2`, ...: a name for a value a pass introduces.
std::string freshValueName(const ir::Module &m, const std::string &base);

/// Calls `f(edges, i, node)` on statement i of each `foreach e in
/// n.incoming` loop nested in a top-level dst-node or node loop n, in
/// program order, until f returns true (it rewrote the module, so the
/// loops' bodies may have moved); returns whether it did. The rewriting
/// passes run it until it returns false.
bool rewriteFirstIncomingStmt(
    ir::Module &m,
    const std::function<bool(ir::Loop &edges, size_t at,
                             const ir::Loop &node)> &f);

/// Whether `s` adds into its node's row, `t[n] += ...` with n the variable
/// of `node`.
bool isNodeSum(const ir::Stmt &s, const ir::Loop &node);

/// Deletes the statements writing `value` and its declaration.
void eraseValue(ir::Module &m, const std::string &value);

/// Removes the loops whose bodies are empty, innermost first, so that a
/// node loop left holding only an empty neighbour loop goes too; top-level
/// loops included. Returns whether any loop was removed.
bool dropEmptyLoops(ir::Module &m);

} // namespace hector::passes
