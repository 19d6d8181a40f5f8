#include "codegen/TorchBindingEmitter.h"

#include "codegen/CodeWriter.h"
#include "codegen/KernelFileEmitter.h"
#include "codegen/Naming.h"
#include "codegen/TraversalEmitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

namespace hector::codegen {
namespace {

std::string argName(const std::string &value) { return "arg_" + value; }
std::string tensorLocal(const std::string &value) { return "t_" + value; }

bool isArgument(const ir::ValueDecl &d) {
  return d.kind == ir::ValueKind::Input || d.kind == ir::ValueKind::Param;
}

/// The forward op's tensor arguments: inputs and params in declaration
/// order.
std::vector<const ir::ValueDecl *> tensorArgs(const intra::Program &p) {
  std::vector<const ir::ValueDecl *> args;
  for (const intra::ValueLayout &l : p.layouts)
    if (isArgument(l.decl))
      args.push_back(&l.decl);
  return args;
}

/// The saved values runForward returns after the outputs: the temps (the
/// backward gets arguments and outputs from autograd's saved variables).
std::vector<std::string> savedTemps(const ProgramLayout &fwd,
                                    const std::vector<std::string> &saved) {
  std::vector<std::string> temps;
  for (const std::string &s : saved) {
    const ir::ValueDecl &d = fwd.layout(s).decl;
    if (d.kind != ir::ValueKind::Output && !isArgument(d))
      temps.push_back(s);
  }
  return temps;
}

std::vector<const ir::ValueDecl *> outputsOf(const intra::Program &p) {
  std::vector<const ir::ValueDecl *> out;
  for (const intra::ValueLayout &l : p.layouts)
    if (l.decl.kind == ir::ValueKind::Output)
      out.push_back(&l.decl);
  return out;
}

/// `{g.num_nodes, hp_in_dim}`: the expected tensor shape of a value.
std::string shapeList(const intra::ValueLayout &l) {
  std::vector<std::string> dims;
  if (l.rows != intra::RowScheme::Global)
    dims.push_back(rowCountExpr(l.rows));
  for (const ir::Dim &d : l.decl.shape)
    dims.push_back(dimExpr(d));
  std::string s = "{";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i];
  return s + "}";
}

std::string hyperParams(const intra::Program &p) {
  std::string s;
  for (const ir::HyperDecl &h : p.hypers)
    s += fmt::format(", {} {}",
                     h.type == ir::HyperDecl::Type::Int ? "int64_t" : "double",
                     h.name);
  return s;
}

std::string hyperArgs(const intra::Program &p) {
  std::string s;
  for (const ir::HyperDecl &h : p.hypers)
    s += ", " + h.name;
  return s;
}

std::string schemaHypers(const intra::Program &p) {
  std::string s;
  for (const ir::HyperDecl &h : p.hypers)
    s += fmt::format(", {} {}",
                     h.type == ir::HyperDecl::Type::Int ? "int" : "float",
                     h.name);
  return s;
}

void printMakeHypers(CodeWriter &w, const ProgramLayout &fwd,
                     const ProgramLayout &bwd, const ProgramLayout *inf) {
  const intra::Program &p = fwd.program();
  std::string params = hyperParams(p);
  if (!params.empty())
    params = params.substr(2);
  w.raw("/// The hyper-parameters, checked: integers positive, every "
        "dimension a positive whole number.");
  w.open("Hypers makeHypers(" + params + ")");
  w.line("Hypers hp;");
  w.line("hp.hector_deterministic = at::globalContext().deterministicAlgorithms();");
  w.line("hp.hector_tf32 = at::globalContext().allowTF32CuBLAS();");
  for (const ir::HyperDecl &h : p.hypers) {
    if (h.type == ir::HyperDecl::Type::Int)
      w.line("hp.{0} = hector::rt::positiveHyper({0}, \"{0}\");", h.name);
    else
      w.line("hp.{0} = {0};", h.name);
  }
  for (const ir::HyperDecl &h : p.hypers)
    w.line("[[maybe_unused]] const {} {} = hp.{};",
           h.type == ir::HyperDecl::Type::Int ? "int64_t" : "double",
           hyperLocal(h.name), h.name);
  // Every dim of every value, once.
  std::vector<ir::Dim> dims;
  for (const ProgramLayout *layout : {&fwd, &bwd, inf}) {
    if (!layout)
      continue; // no inference program
    for (const intra::ValueLayout &l : layout->program().layouts)
      for (const ir::Dim &d : l.decl.shape)
        if (!d.isConstant() &&
            std::find(dims.begin(), dims.end(), d) == dims.end())
          dims.push_back(d);
  }
  for (const ir::Dim &d : dims) {
    for (const ir::DimTerm &t : d.terms()) {
      std::string num = fmt::format("INT64_C({})", t.coeff), den;
      for (const auto &[symbol, power] : t.powers)
        for (int i = 0; i < std::abs(power); ++i)
          (power > 0 ? num : den) += (power > 0 ? " * " : den.empty() ? "" : " * ") +
                                     hyperLocal(symbol);
      if (!den.empty())
        w.line("TORCH_CHECK_VALUE(({}) % ({}) == 0, \"hypers: the dimension "
               "{} is not a whole number\");",
               num, den, d.str());
    }
    w.line("TORCH_CHECK_VALUE({} > 0, \"hypers: the dimension {} must be "
           "positive\");",
           dimExpr(d), d.str());
  }
  w.line("return hp;");
  w.close();
}

void printDeviceHelpers(CodeWriter &w, const std::string &model) {
  w.raw("/// Runs `cpu` or `cuda` (with the stream and device of the graph's "
        "tensors).");
  w.raw("template <typename Cpu, typename Cuda>");
  w.open("void runOn(const at::Device &device, Cpu cpu, Cuda cuda)");
  w.open("if (device.is_cuda())");
  w.raw("#if defined(HECTOR_GEN_WITH_CUDA) && defined(HECTOR_GEN_TORCH_CUDA)");
  w.line("const c10::cuda::CUDAGuard guard(device);");
  w.line("cuda(static_cast<void *>(c10::cuda::getCurrentCUDAStream("
         "device.index()).stream()));");
  w.raw("#else");
  w.line("(void)cuda;");
  w.line("TORCH_CHECK(false, \"hector_{}: this library was built without "
         "CUDA\");",
         model);
  w.raw("#endif");
  w.close();
  w.open("else");
  w.line("cpu();");
  w.close();
  w.close();
}

/// Allocates every stored value the program writes and points `b` at it,
/// in three kinds of allocation by lifetime (each at::empty costs a few
/// microseconds of host time; docs/perf-notes.md section 25):
///  - an output's buffer, its own: the caller keeps it;
///  - the saved temps, one arena: autograd keeps them together until the
///    backward, and frees them together;
///  - every other temp, one arena freed when the call returns.
void printAllocations(CodeWriter &w, const ProgramLayout &p,
                      const std::vector<std::string> &savedTemps) {
  std::set<std::string> outputRoots, savedRoots;
  for (const intra::ValueLayout &l : p.program().layouts)
    if (l.decl.kind == ir::ValueKind::Output)
      outputRoots.insert(p.root(l.decl.name));
  for (const std::string &s : savedTemps)
    if (!outputRoots.count(p.root(s)))
      savedRoots.insert(p.root(s));
  std::vector<const intra::ValueLayout *> own, saved, scratch;
  for (const intra::ValueLayout *l : p.buffers()) {
    if (isArgument(l->decl))
      continue;
    const std::string &n = l->decl.name;
    (outputRoots.count(n) ? own : savedRoots.count(n) ? saved : scratch)
        .push_back(l);
  }
  w.line("const at::TensorOptions options = "
         "at::TensorOptions().dtype(dtype).device(device);");
  for (const intra::ValueLayout *l : own) {
    w.line("at::Tensor {} = at::empty(std::vector<int64_t>{}, options);",
           tensorLocal(l->decl.name), shapeList(*l));
    w.line("b.{} = {}.data_ptr<scalar_t>();", l->decl.name,
           tensorLocal(l->decl.name));
  }
  auto arena = [&](const std::vector<const intra::ValueLayout *> &members,
                   const std::string &name, const char *why) {
    if (members.empty())
      return;
    std::string numels;
    for (const intra::ValueLayout *l : members)
      numels += (numels.empty() ? "" : ", ") +
                bufferNumelExpr(l->rows, l->decl.name);
    w.line("// {}", why);
    w.line("const hector::rt::BufferArena {}({{{}}}, options);", name,
           numels);
  };
  arena(saved, "saved_arena",
        "The saved temps, in one allocation: autograd frees them together.");
  for (size_t i = 0; i < saved.size(); ++i) {
    const std::string &n = saved[i]->decl.name;
    w.line("at::Tensor {} = saved_arena.tensor({}, {});", tensorLocal(n), i,
           shapeList(*saved[i]));
    w.line("b.{} = {}.data_ptr<scalar_t>();", n, tensorLocal(n));
  }
  arena(scratch, "scratch_arena",
        "The other temps, in one allocation freed when the call returns.");
  for (size_t i = 0; i < scratch.size(); ++i)
    w.line("b.{} = scratch_arena.data<scalar_t>({});", scratch[i]->decl.name,
           i);
}

/// The tensor holding a value the program wrote (a view shares its root's).
std::string resultTensor(const ProgramLayout &p, const std::string &value) {
  const std::string root = p.root(value);
  if (root == value)
    return tensorLocal(value);
  return fmt::format("{}.view(std::vector<int64_t>{})", tensorLocal(root),
                     shapeList(p.layout(value)));
}

/// "runForward" for the forward program, "runInference" for the inference
/// one: the host function that checks, allocates and launches.
std::string runFunction(const ProgramLayout &p) {
  std::string entry = p.entry();
  entry[0] = static_cast<char>(entry[0] - 'a' + 'A');
  return "run" + entry;
}

void printLaunch(CodeWriter &w, const ProgramLayout &p) {
  w.line("runOn(");
  w.line("    device, [&] {{ {}_cpu<scalar_t>(g, gv, b, hp); }},", p.entry());
  w.raw("    [&](void *stream) {");
  w.raw("#if defined(HECTOR_GEN_WITH_CUDA)");
  w.line("      {}_cuda<scalar_t>(g, gv, b, hp, stream);", p.entry());
  w.raw("#else");
  w.raw("      (void)stream;");
  w.raw("#endif");
  w.raw("    });");
}

/// runForwardT/runForward (or, for the inference program, runInferenceT/
/// runInference): the program's kernels on the op's arguments.
void printRunForward(CodeWriter &w, const ProgramLayout &fwd,
                     const std::vector<std::string> &saved) {
  const intra::Program &p = fwd.program();
  const std::string run = runFunction(fwd);
  const std::vector<const ir::ValueDecl *> args = tensorArgs(p);
  std::string params, callArgs;
  for (const ir::ValueDecl *d : args) {
    params += ", const at::Tensor &" + argName(d->name);
    callArgs += ", " + argName(d->name);
  }
  w.line("/// The {} kernels in scalar_t: checks the arguments, allocates, "
         "runs; returns the outputs{}.",
         fwd.entry(), saved.empty() ? "" : ", then the saved values");
  w.raw("template <typename scalar_t>");
  w.open("std::vector<at::Tensor> " + run +
         "T(const std::vector<at::Tensor> "
         "&graph_arrays, const hector::rt::GraphArrays &g" +
         params + ", const Hypers &hp)");
  w.line("const at::Device device = graph_arrays.front().device();");
  w.line("const at::ScalarType dtype = "
         "c10::CppTypeToScalarType<scalar_t>::value;");
  printPrologue(w, fwd);
  w.line("std::vector<at::Tensor> keep;");
  w.line("const hector::rt::GraphValues<scalar_t> gv = "
         "hector::rt::graphValues<scalar_t>(graph_arrays, keep);");
  w.line("{}<scalar_t> b;", fwd.buffersType());
  for (const ir::ValueDecl *d : args) {
    w.line("hector::rt::checkArgument({}, \"{}\", {}, device, dtype, \"{}\");",
           argName(d->name), d->name, shapeList(fwd.layout(d->name)),
           args.front()->name);
    w.line("b.{} = {}.data_ptr<scalar_t>();", d->name, argName(d->name));
  }
  printAllocations(w, fwd, savedTemps(fwd, saved));
  printLaunch(w, fwd);
  std::vector<std::string> results;
  for (const ir::ValueDecl *d : outputsOf(p))
    results.push_back(resultTensor(fwd, d->name));
  for (const std::string &s : savedTemps(fwd, saved))
    results.push_back(resultTensor(fwd, s));
  std::string list;
  for (size_t i = 0; i < results.size(); ++i)
    list += (i ? ", " : "") + results[i];
  w.line("return {{{}}};", list);
  w.close();
  w.blank();
  w.line("/// The {} kernels in the dtype of the first argument (float32 "
         "or float64).",
         fwd.entry());
  w.open("std::vector<at::Tensor> " + run +
         "(const std::vector<at::Tensor> "
         "&graph_arrays" +
         params + ", const Hypers &hp)");
  w.line("const hector::rt::GraphArrays g = "
         "hector::rt::graphArgument(graph_arrays, \"graph_arrays\");");
  w.line("if (hector::rt::floatScalarType({}, \"{}\") == at::kDouble)",
         argName(args.front()->name), args.front()->name);
  w.line("  return {}T<double>(graph_arrays, g{}, hp);", run, callArgs);
  w.line("return {}T<float>(graph_arrays, g{}, hp);", run, callArgs);
  w.close();
}

/// The backward program's inputs and params: the `values` argument.
std::vector<const ir::ValueDecl *> backwardValues(const ProgramLayout &bwd) {
  return tensorArgs(bwd.program());
}

void printRunBackward(CodeWriter &w, const ProgramLayout &bwd) {
  const std::vector<const ir::ValueDecl *> values = backwardValues(bwd);
  w.raw("/// The backward kernels in scalar_t: `values` are the backward "
        "program's inputs and params in declaration order; returns its "
        "outputs.");
  w.raw("template <typename scalar_t>");
  w.open("std::vector<at::Tensor> runBackwardT(const std::vector<at::Tensor> "
         "&graph_arrays, const hector::rt::GraphArrays &g, const "
         "std::vector<at::Tensor> &values, const Hypers &hp)");
  w.line("const at::Device device = graph_arrays.front().device();");
  w.line("const at::ScalarType dtype = "
         "c10::CppTypeToScalarType<scalar_t>::value;");
  printPrologue(w, bwd);
  w.line("std::vector<at::Tensor> keep;");
  w.line("const hector::rt::GraphValues<scalar_t> gv = "
         "hector::rt::graphValues<scalar_t>(graph_arrays, keep);");
  w.line("BackwardBuffers<scalar_t> b;");
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string &n = values[i]->name;
    w.line("hector::rt::checkArgument(values[{0}], \"values[{0}] ({1})\", "
           "{2}, device, dtype, \"values[0]\");",
           i, n, shapeList(bwd.layout(n)));
    w.line("b.{} = values[{}].data_ptr<scalar_t>();", n, i);
  }
  printAllocations(w, bwd, {});
  printLaunch(w, bwd);
  std::string list;
  for (const ir::ValueDecl *d : outputsOf(bwd.program()))
    list += (list.empty() ? "" : ", ") + resultTensor(bwd, d->name);
  w.line("return {{{}}};", list);
  w.close();
  w.blank();
  w.raw("/// The backward kernels in the dtype of values[0].");
  w.open("std::vector<at::Tensor> runBackward(const std::vector<at::Tensor> "
         "&graph_arrays, const std::vector<at::Tensor> &values, const Hypers "
         "&hp)");
  w.line("const hector::rt::GraphArrays g = "
         "hector::rt::graphArgument(graph_arrays, \"graph_arrays\");");
  w.line("TORCH_CHECK_VALUE(values.size() == {0}, \"values: expected {0} "
         "tensors (the inputs and params of @{1}), got \", values.size());",
         values.size(), bwd.program().name);
  w.line("if (hector::rt::floatScalarType(values[0], \"values[0]\") == "
         "at::kDouble)");
  w.line("  return runBackwardT<double>(graph_arrays, g, values, hp);");
  w.line("return runBackwardT<float>(graph_arrays, g, values, hp);");
  w.close();
}

void printAutogradFunction(CodeWriter &w, const ProgramLayout &fwd,
                           const ProgramLayout &bwd,
                           const std::vector<std::string> &saved,
                           const std::map<std::string, std::string> &gradients) {
  const intra::Program &p = fwd.program();
  const std::vector<const ir::ValueDecl *> args = tensorArgs(p);
  const std::vector<const ir::ValueDecl *> outputs = outputsOf(p);
  std::string params, callArgs;
  for (const ir::ValueDecl *d : args) {
    params += ", const at::Tensor &" + argName(d->name);
    callArgs += ", " + argName(d->name);
  }
  // Saved temps come back from runForward after the outputs, in order.
  const std::vector<std::string> temps = savedTemps(fwd, saved);
  // Values the backward reads that autograd must keep with version
  // checks: the forward's arguments and outputs.
  std::vector<std::string> kept;
  for (const ir::ValueDecl *d : args)
    kept.push_back(d->name);
  for (const ir::ValueDecl *d : outputs)
    if (std::find(saved.begin(), saved.end(), d->name) != saved.end())
      kept.push_back(d->name);

  w.raw("/// The layer as one autograd node: forward runs the forward "
        "kernels, backward exactly the backward program's kernels.");
  w.open("class LayerFunction : public "
         "torch::autograd::Function<LayerFunction>");
  w.raw("public:");
  w.open("static variable_list forward(AutogradContext *ctx, "
         "std::vector<at::Tensor> graph_arrays" +
         params + hyperParams(p) + ")");
  w.line("const Hypers hp = makeHypers({});",
         hyperArgs(p).empty() ? "" : hyperArgs(p).substr(2));
  w.line("std::vector<at::Tensor> results = runForward(graph_arrays{}, hp);",
         callArgs);
  w.line("ctx->saved_data[\"graph_arrays\"] = graph_arrays;");
  for (const ir::HyperDecl &h : p.hypers)
    w.line("ctx->saved_data[\"{0}\"] = {0};", h.name);
  std::string keptList;
  for (const std::string &k : kept) {
    std::string t = argName(k);
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i]->name == k)
        t = fmt::format("results[{}]", i);
    keptList += (keptList.empty() ? "" : ", ") + t;
  }
  w.line("ctx->save_for_backward({{{}}});", keptList);
  w.line("ctx->saved_data[\"temps\"] = std::vector<at::Tensor>(results.begin() "
         "+ {}, results.end());",
         outputs.size());
  w.line("results.resize({});", outputs.size());
  w.line("return results;");
  w.close();
  w.blank();
  w.open("static variable_list backward(AutogradContext *ctx, variable_list "
         "grads)");
  w.line("const std::vector<at::Tensor> graph_arrays = "
         "ctx->saved_data[\"graph_arrays\"].toTensorVector();");
  std::string hyperRead;
  for (const ir::HyperDecl &h : p.hypers)
    hyperRead += fmt::format("{}ctx->saved_data[\"{}\"].{}()",
                             hyperRead.empty() ? "" : ", ", h.name,
                             h.type == ir::HyperDecl::Type::Int ? "toInt"
                                                                : "toDouble");
  w.line("Hypers hp = makeHypers({});", hyperRead);
  // Backward output j is the gradient of tensor argument argOf[j]
  // (autograd's edge argOf[j]: the graph arrays are no variable).
  const std::vector<const ir::ValueDecl *> bouts = outputsOf(bwd.program());
  std::vector<std::optional<size_t>> argOf(bouts.size());
  for (size_t i = 0; i < args.size(); ++i) {
    auto it = gradients.find(args[i]->name);
    if (it == gradients.end())
      continue; // a const input: no gradient
    for (size_t j = 0; j < bouts.size(); ++j)
      if (bouts[j]->name == it->second)
        argOf[j] = i;
  }
  if (bouts.size() <= 64) {
    // The gradients autograd will use: the backward skips the instances
    // that feed only the others (codegen/OutputDependences.h).
    uint64_t always = 0;
    for (size_t j = 0; j < bouts.size(); ++j)
      if (!argOf[j])
        always |= uint64_t(1) << j;
    w.line("uint64_t needed = UINT64_C({:#x});", always);
    for (size_t j = 0; j < bouts.size(); ++j)
      if (argOf[j])
        w.line("if (ctx->needs_input_grad({})) needed |= UINT64_C({:#x}); "
               "// {}",
               *argOf[j], uint64_t(1) << j, bouts[j]->name);
    w.line("hp.hector_needed_outputs = needed;");
  }
  w.line("const variable_list kept = ctx->get_saved_variables();");
  w.line("const std::vector<at::Tensor> temps = "
         "ctx->saved_data[\"temps\"].toTensorVector();");
  w.line("const hector::rt::GraphArrays g = "
         "hector::rt::graphArgument(graph_arrays, \"graph_arrays\");");
  printPrologue(w, bwd);
  w.line("const at::TensorOptions options = "
         "at::TensorOptions().dtype(kept.front().scalar_type()).device("
         "graph_arrays.front().device());");
  w.line("std::vector<at::Tensor> values;");
  for (const ir::ValueDecl *d : backwardValues(bwd)) {
    const std::string &n = d->name;
    auto keptAt = std::find(kept.begin(), kept.end(), n);
    auto tempAt = std::find(temps.begin(), temps.end(), n);
    if (keptAt != kept.end()) {
      w.line("values.push_back(kept[{}]); // {}", keptAt - kept.begin(), n);
    } else if (tempAt != temps.end()) {
      w.line("values.push_back(temps[{}]); // {}", tempAt - temps.begin(), n);
    } else {
      // grad_<output>: the incoming gradient (zeros when autograd passes
      // none).
      size_t index = outputs.size();
      for (size_t i = 0; i < outputs.size(); ++i)
        if ("grad_" + outputs[i]->name == n)
          index = i;
      if (index == outputs.size())
        throw EmitError{"@" + bwd.program().name + " reads '" + n +
                        "', which the forward neither takes nor saves"};
      w.line("values.push_back(grads[{0}].defined() ? "
             "grads[{0}].contiguous() : at::zeros(std::vector<int64_t>{1}, options)); // {2}",
             index, shapeList(bwd.layout(n)), n);
    }
  }
  w.line("const std::vector<at::Tensor> out = runBackward(graph_arrays, "
         "values, hp);");
  const size_t numArgs = 1 + args.size() + p.hypers.size();
  w.line("variable_list result({});", numArgs);
  // A gradient autograd did not ask for was not computed: none is returned.
  for (size_t j = 0; j < bouts.size(); ++j)
    if (argOf[j])
      w.line("result[{0}] = ctx->needs_input_grad({1}) ? out[{2}] : "
             "at::Tensor(); // {3}",
             1 + *argOf[j], *argOf[j], j, bouts[j]->name);
  w.line("return result;");
  w.close();
  w.close(";");
}

void printOps(CodeWriter &w, const ProgramLayout &fwd,
              const ProgramLayout *inf) {
  const intra::Program &p = fwd.program();
  std::string params, callArgs, needsGrad;
  for (const ir::ValueDecl *d : tensorArgs(p)) {
    params += ", const at::Tensor &" + argName(d->name);
    callArgs += ", " + argName(d->name);
    needsGrad += (needsGrad.empty() ? "" : " || ") + argName(d->name) +
                 ".requires_grad()";
  }
  const std::string hypers = hyperArgs(p);
  const std::string hyperCall = hypers.empty() ? "" : hypers.substr(2);
  w.open("std::vector<at::Tensor> forwardOp(std::vector<at::Tensor> "
         "graph_arrays" +
         params + hyperParams(p) + ")");
  if (inf) {
    // No gradient to take: the inference program, which keeps nothing for
    // a backward (and may compute the outputs another way).
    w.line("if (!at::GradMode::is_enabled() || !({}))", needsGrad);
    w.line("  return runInference(graph_arrays{}, makeHypers({}));", callArgs,
           hyperCall);
  }
  w.line("return LayerFunction::apply(graph_arrays{}{});", callArgs, hypers);
  w.close();
  w.blank();
  w.open("std::vector<at::Tensor> forwardKernelsOp(std::vector<at::Tensor> "
         "graph_arrays" +
         params + hyperParams(p) + ")");
  w.line("return runForward(graph_arrays{}, makeHypers({}));", callArgs,
         hypers.empty() ? "" : hypers.substr(2));
  w.close();
  w.blank();
  w.open("std::vector<at::Tensor> backwardKernelsOp(std::vector<at::Tensor> "
         "graph_arrays, std::vector<at::Tensor> values" +
         hyperParams(p) + ")");
  w.line("return runBackward(graph_arrays, values, makeHypers({}));",
         hyperCall);
  w.close();
  if (inf) {
    w.blank();
    w.open("std::vector<at::Tensor> inferenceKernelsOp(std::vector<at::Tensor> "
           "graph_arrays" +
           params + hyperParams(p) + ")");
    w.line("return runInference(graph_arrays{}, makeHypers({}));", callArgs,
           hyperCall);
    w.close();
  }
}

void printRegistration(CodeWriter &w, const ProgramLayout &fwd,
                       const ProgramLayout *inf) {
  const intra::Program &p = fwd.program();
  std::string tensorSchema;
  for (const ir::ValueDecl *d : tensorArgs(p))
    tensorSchema += ", Tensor " + d->name;
  const std::string hypers = schemaHypers(p);
  w.open(fmt::format("TORCH_LIBRARY(hector_{}, m)", p.name));
  w.line("m.def(\"forward(Tensor[] graph_arrays{}{}) -> Tensor[]\", "
         "&{}::forwardOp);",
         tensorSchema, hypers, layerNamespace(p.name));
  w.line("m.def(\"forward_kernels(Tensor[] graph_arrays{}{}) -> Tensor[]\", "
         "&{}::forwardKernelsOp);",
         tensorSchema, hypers, layerNamespace(p.name));
  w.line("m.def(\"backward_kernels(Tensor[] graph_arrays, Tensor[] values{}) "
         "-> Tensor[]\", &{}::backwardKernelsOp);",
         hypers, layerNamespace(p.name));
  if (inf)
    w.line("m.def(\"inference_kernels(Tensor[] graph_arrays{}{}) -> "
           "Tensor[]\", &{}::inferenceKernelsOp);",
           tensorSchema, hypers, layerNamespace(p.name));
  w.close();
}

} // namespace

std::string
emitTorchBinding(const ProgramLayout &forward, const ProgramLayout &backward,
                 const std::vector<std::string> &saved,
                 const std::map<std::string, std::string> &gradients,
                 const ProgramLayout *inference) {
  const std::string &model = forward.program().name;
  CodeWriter w;
  w.raw("// Generated by hectorc. Do not edit: regenerate with `hectorc "
        "MODEL.hgnn -o DIR`.");
  w.line("// The torch binding of layer @{}: ops hector_{}::forward "
         "(autograd), ::forward_kernels and ::backward_kernels{}.",
         model, model, inference ? " (and ::inference_kernels)" : "");
  w.raw("#include \"kernels.h\"");
  w.blank();
  w.raw("#include \"runtime/BufferArena.h\"");
  w.raw("#include \"runtime/KernelArgs.h\"");
  w.blank();
  w.raw("#include <ATen/ATen.h>");
  w.raw("#include <torch/autograd.h>");
  w.raw("#include <torch/library.h>");
  w.raw("#if defined(HECTOR_GEN_WITH_CUDA) && defined(HECTOR_GEN_TORCH_CUDA)");
  w.raw("#include <c10/cuda/CUDAGuard.h>");
  w.raw("#include <c10/cuda/CUDAStream.h>");
  w.raw("#endif");
  w.blank();
  w.raw("#include <vector>");
  w.blank();
  w.open("namespace " + layerNamespace(model));
  w.raw("namespace {");
  w.blank();
  w.raw("using torch::autograd::AutogradContext;");
  w.raw("using torch::autograd::variable_list;");
  w.blank();
  printMakeHypers(w, forward, backward, inference);
  w.blank();
  printDeviceHelpers(w, model);
  w.blank();
  printRunForward(w, forward, saved);
  w.blank();
  printRunBackward(w, backward);
  w.blank();
  if (inference) {
    printRunForward(w, *inference, {});
    w.blank();
  }
  printAutogradFunction(w, forward, backward, saved, gradients);
  w.blank();
  printOps(w, forward, inference);
  w.blank();
  w.raw("} // namespace");
  w.close(" // namespace " + layerNamespace(model));
  w.blank();
  printRegistration(w, forward, inference);
  return w.str();
}

} // namespace hector::codegen
