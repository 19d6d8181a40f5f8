// The `hector._C` extension module: the C++ runtime as the Python package
// (runtime/python/hector) sees it. Thin on purpose: the package validates
// arguments with Python-level messages first, and everything here re-checks
// through the C++ entry points, whose ArgumentTypeError/ArgumentValueError
// become TypeError/ValueError.
#include "ir/Diagnostics.h"
#include "ir/InterIRParser.h"
#include "ir/InterIRPrinter.h"
#include "ir/InterIRVerifier.h"
#include "runtime/Errors.h"
#include "runtime/Graph.h"
#include "runtime/GraphArrays.h"
#include "runtime/Interpreter.h"

#include <torch/extension.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace hector;

namespace {

/// Parses (and by default verifies) printed inter-op IR; raises ValueError
/// with the rendered diagnostics when the text is not a valid module.
std::shared_ptr<ir::Module> parseModule(const std::string &text,
                                        const std::string &file, bool verify) {
  ir::DiagnosticEngine diags;
  diags.addSource(file, text);
  std::optional<ir::Module> module = ir::parseModule(text, file, diags);
  if (module && !diags.hasErrors() && verify)
    ir::verifyModule(*module, diags);
  if (!module || diags.hasErrors()) {
    std::ostringstream os;
    diags.print(os);
    throw runtime::ArgumentValueError("invalid inter-op IR in " + file + ":\n" +
                                      os.str());
  }
  return std::make_shared<ir::Module>(std::move(*module));
}

py::list valueList(const ir::Module &m) {
  py::list out;
  for (const ir::ValueDecl &v : m.values) {
    py::dict d;
    d["name"] = v.name;
    d["kind"] = ir::valueKindName(v.kind);
    d["space"] = ir::spaceName(v.space);
    d["shape"] = ir::shapeStr(v.shape);
    d["const"] = v.constant;
    out.append(d);
  }
  return out;
}

py::list hyperList(const ir::Module &m) {
  py::list out;
  for (const ir::HyperDecl &h : m.hypers) {
    py::dict d;
    d["name"] = h.name;
    d["type"] = h.type == ir::HyperDecl::Type::Int ? "int" : "float";
    d["default"] = h.defaultValue;
    out.append(d);
  }
  return out;
}

} // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "Hector runtime (C++): graph container, IR parser, interpreter";

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const runtime::ArgumentTypeError &e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const runtime::ArgumentValueError &e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  py::class_<runtime::Graph, std::shared_ptr<runtime::Graph>>(m, "Graph")
      .def(py::init<torch::Tensor, torch::Tensor, torch::Tensor, torch::Tensor,
                    int64_t, int64_t, int64_t>(),
           py::arg("src"), py::arg("dst"), py::arg("etype"), py::arg("ntype"),
           py::arg("num_nodes"), py::arg("num_etypes"), py::arg("num_ntypes"))
      .def_property_readonly("num_nodes", &runtime::Graph::numNodes)
      .def_property_readonly("num_edges", &runtime::Graph::numEdges)
      .def_property_readonly("num_etypes", &runtime::Graph::numEtypes)
      .def_property_readonly("num_ntypes", &runtime::Graph::numNtypes)
      .def_property_readonly("num_pairs", &runtime::Graph::numPairs)
      .def_property_readonly("src", &runtime::Graph::src)
      .def_property_readonly("dst", &runtime::Graph::dst)
      .def_property_readonly("etype", &runtime::Graph::etype)
      .def_property_readonly("ntype", &runtime::Graph::ntype)
      .def("in_degree", &runtime::Graph::inDegree)
      .def("out_degree", &runtime::Graph::outDegree)
      .def("rel_in_degree", &runtime::Graph::relInDegree)
      .def("edge_pair", &runtime::Graph::edgePair)
      .def("pair_src", &runtime::Graph::pairSrc)
      .def("pair_etype", &runtime::Graph::pairEtype)
      .def(
          "kernel_arrays",
          [](const runtime::Graph &g, const std::string &edgeOrder) {
            if (edgeOrder != "given" && edgeOrder != "dst")
              throw py::value_error("edge_order: expected 'given' or 'dst', "
                                    "got '" +
                                    edgeOrder + "'");
            return g.kernelArrays(edgeOrder == "dst"
                                      ? runtime::EdgeOrder::ByDst
                                      : runtime::EdgeOrder::Given);
          },
          py::arg("edge_order") = "given",
          "Every array the generated kernels read, as a list in the order "
          "of graph_array_names(), with the edges numbered as given or "
          "sorted by destination ('dst')");

  m.def(
      "graph_array_names",
      [] {
        std::vector<std::string> names;
        for (int i = 0; i < rt::kNumGraphArrays; ++i)
          names.emplace_back(
              rt::graphArrayName(static_cast<rt::GraphArray>(i)));
        return names;
      },
      "The names of Graph.kernel_arrays(), in order (the fields of "
      "runtime/GraphArrays.h)");

  py::class_<ir::Module, std::shared_ptr<ir::Module>>(m, "Module")
      .def_property_readonly("name",
                             [](const ir::Module &mod) { return mod.name; })
      .def("values", &valueList,
           "Declared values: dicts with name, kind, space, shape, const")
      .def("hypers", &hyperList,
           "Hyper-parameters: dicts with name, type, default")
      .def(
          "text", [](const ir::Module &mod) { return ir::printModule(mod); },
          "The module in printed inter-op IR form")
      .def("__repr__", [](const ir::Module &mod) {
        return "<hector._C.Module @" + mod.name + ">";
      });

  m.def("parse_module", &parseModule, py::arg("text"), py::arg("file") = "<ir>",
        py::arg("verify") = true,
        "Parses printed inter-op IR (and verifies it unless verify=False); "
        "raises ValueError with the diagnostics when it is invalid");

  m.def(
      "value_shapes",
      [](const ir::Module &module, const runtime::Graph &graph,
         const std::map<std::string, double> &hypers) {
        runtime::InterpretOptions options;
        options.hypers = hypers;
        return runtime::valueShapes(module, graph, options);
      },
      py::arg("module"), py::arg("graph"),
      py::arg("hypers") = std::map<std::string, double>{},
      "{value name: full tensor shape} on this graph with these hypers");

  m.def(
      "interpret",
      [](const ir::Module &module, const runtime::Graph &graph,
         const runtime::TensorMap &inputs, const runtime::TensorMap &params,
         const std::map<std::string, double> &hypers, bool returnAll) {
        runtime::InterpretOptions options;
        options.hypers = hypers;
        options.returnAllValues = returnAll;
        // The GIL stays held: the interpreter is the oracle, not a hot path,
        // and the tensors it creates and drops belong to Python.
        return runtime::interpret(module, graph, inputs, params, options);
      },
      py::arg("module"), py::arg("graph"), py::arg("inputs"), py::arg("params"),
      py::arg("hypers") = std::map<std::string, double>{},
      py::arg("return_all") = false,
      "Runs a verified module on a graph with the interpreter; returns "
      "{output name: tensor} (every value with return_all=True)");
}
