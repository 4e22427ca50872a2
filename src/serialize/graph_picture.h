// The exported graph as a picture (`--graph FILE.svg`): Graphviz's dot lays
// out the nodes, grouped in boxes by the module scope they came from, with
// each edge labelled by the shape it carries; weights are listed inside the
// node that takes them rather than drawn. In the SVG a click on a scope's
// title folds its contents away (and back).
#pragma once

#include <string>

#include "ir/model.h"

namespace torch2onnx::serialize {

// The model as a Graphviz dot document.
std::string graph_dot(const ir::Model& model);

// Writes the picture to `path`, in the format its extension names: .svg
// (with the folding script), .png or .pdf (drawn by dot, which must be on
// the PATH), or .dot (the layout's input). Throws Error(Io) when dot is
// missing or fails (nothing is left behind then), Error(Usage) for another
// extension.
void write_graph_picture(const ir::Model& model, const std::string& path);

}  // namespace torch2onnx::serialize
